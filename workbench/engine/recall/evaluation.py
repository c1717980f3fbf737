"""Offline recall quality over a labelled query set: recall@5 and precision@5.

A query set is a YAML list of `{sample, query, expect: [paths], also: [paths]}` over the
shipped sample projects. recall@5 is the share of queries with an expected memory whose
expected memory is among the (at most 5) selected; precision@5 is the share of selected
memories that are relevant (`expect` or `also`), over all queries.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from workbench.engine.engine import Engine
from workbench.engine.errors import UserInputError
from workbench.engine.userfiles import NOTES_LIMIT, read_text


@dataclass(frozen=True)
class LabelledQuery:
    """One query and the memories a careful reader would pick for it."""

    sample: str
    query: str
    expect: tuple[str, ...]
    also: tuple[str, ...] = ()
    recent_tools: tuple[str, ...] = ()


@dataclass(frozen=True)
class QueryOutcome:
    """What the ranker selected for one labelled query."""

    item: LabelledQuery
    selected: tuple[str, ...]

    @property
    def hit(self) -> bool:
        return bool(set(self.item.expect) & set(self.selected))

    @property
    def relevant_selected(self) -> int:
        relevant = set(self.item.expect) | set(self.item.also)
        return sum(1 for path in self.selected if path in relevant)


@dataclass(frozen=True)
class EvaluationReport:
    """recall@5 and precision@5 over a query set."""

    outcomes: tuple[QueryOutcome, ...]

    @property
    def positives(self) -> list[QueryOutcome]:
        return [o for o in self.outcomes if o.item.expect]

    @property
    def recall_at_5(self) -> float:
        positives = self.positives
        return sum(o.hit for o in positives) / len(positives) if positives else 0.0

    @property
    def precision_at_5(self) -> float:
        selected = sum(len(o.selected) for o in self.outcomes)
        relevant = sum(o.relevant_selected for o in self.outcomes)
        return relevant / selected if selected else 0.0

    @property
    def misses(self) -> list[QueryOutcome]:
        return [o for o in self.positives if not o.hit]

    def to_json(self) -> dict[str, Any]:
        return {
            "queries": len(self.outcomes),
            "positive_queries": len(self.positives),
            "recall_at_5": round(self.recall_at_5, 4),
            "precision_at_5": round(self.precision_at_5, 4),
            "misses": [
                {"query": o.item.query, "expect": list(o.item.expect), "selected": list(o.selected)}
                for o in self.misses
            ],
        }


def load_queries(path: str | Path) -> list[LabelledQuery]:
    """Read a labelled query file; malformed entries are a `UserInputError`."""
    try:
        data = yaml.safe_load(read_text(path, NOTES_LIMIT, "a query set"))
    except (OSError, yaml.YAMLError) as exc:
        raise UserInputError(f"cannot read query set {path}: {exc}") from None
    if not isinstance(data, list):
        raise UserInputError(f"{path}: expected a list of queries")
    items = []
    for number, row in enumerate(data, 1):
        if not isinstance(row, Mapping) or not isinstance(row.get("query"), str):
            raise UserInputError(f"{path}: entry {number} needs a query")
        items.append(
            LabelledQuery(
                sample=str(row.get("sample", "")),
                query=row["query"],
                expect=tuple(row.get("expect") or ()),
                also=tuple(row.get("also") or ()),
                recent_tools=tuple(row.get("recent_tools") or ()),
            )
        )
    return items


def engines_for_samples(samples: Sequence[str], dest: str | Path) -> dict[str, Engine]:
    """Install each sample under `dest` and open an engine on it."""
    from workbench.engine.samples import install_sample

    engines = {}
    for name in dict.fromkeys(samples):
        installed = install_sample(name, Path(dest) / name)
        engines[name] = Engine.open(
            installed.project_root,
            config_home=str(installed.config_home),
            env={"HOME": str(Path(dest)), "CLAUDE_CONFIG_DIR": str(installed.config_home)},
        )
    return engines


def evaluate(queries: Sequence[LabelledQuery], engines: Mapping[str, Engine]) -> EvaluationReport:
    """Run the offline ranker on every query against its sample's engine."""
    outcomes = []
    for item in queries:
        engine = engines[item.sample]
        result = engine.recall.recall_offline(item.query, recent_tools=item.recent_tools)
        outcomes.append(QueryOutcome(item, tuple(s.path for s in result.selected)))
    return EvaluationReport(tuple(outcomes))


def evaluate_file(path: str | Path) -> EvaluationReport:
    """Install the samples a query file needs in a temp folder and evaluate it."""
    queries = load_queries(path)
    with tempfile.TemporaryDirectory(prefix="workbench-recall-eval-") as dest:
        engines = engines_for_samples([q.sample for q in queries], dest)
        return evaluate(queries, engines)
