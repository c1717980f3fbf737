"""Offline recall over 200 candidates (bar: under 20 ms per query, median), and its quality.

Figures: the cold index build (scan, read, BM25 indexes), one warm `recall_offline` call
(re-scan, rank, explain, read what would be injected) against the same call with the index
rebuilt every time (no cache; the ratio is measured in the same run), the ranking step
alone, and recall@5 / precision@5 on the labelled and held-out query sets.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import median_seconds, report  # noqa: E402
from workbench.engine import Engine  # noqa: E402
from workbench.engine.recall.evaluation import (  # noqa: E402
    engines_for_samples,
    evaluate,
    load_queries,
)
from workbench.engine.recall.ranker import OfflineRanker  # noqa: E402

CANDIDATES = 200
DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
SYSTEMS = [
    "checkout",
    "billing",
    "search",
    "auth",
    "payments",
    "ledger",
    "notifications",
    "catalog",
    "inventory",
    "shipping",
    "reporting",
    "gateway",
    "scheduler",
    "exports",
    "webhooks",
]
TOPICS = [
    ("deploy freeze", "no production deploys of {s} during the {m} freeze"),
    ("migration rule", "{s} database migrations must stay backward compatible for one release"),
    ("dashboard", "Grafana board for {s} latency, error rate and queue depth"),
    ("rate limit", "{s} provider allows {n} requests per second; retries reuse idempotency keys"),
    ("runbook", "on-call runbook for {s} alerts lives in Notion"),
    ("flaky test", "the {s} end-to-end test is quarantined because CI clocks drift"),
    ("owner", "{s} is owned by the platform team; reviews need two approvals"),
    ("log hygiene", "never log card numbers or emails from {s}; redact structured fields"),
    ("release train", "{s} ships every {d}; the cut-off is the day before at 16:00"),
    ("config", "{s} feature flags are read from the config service at start-up"),
]
TYPES = ("user", "feedback", "project", "reference")
QUERIES = [
    "can we deploy checkout during the december freeze?",
    "what does the billing dashboard show for latency?",
    "add a column to the search database table",
    "we are rate limited by the payments provider again",
    "the ledger e2e test failed on CI, is that real?",
    "who reviews changes to the gateway?",
    "log the customer email when a webhook fails",
    "when is the next shipping release cut-off?",
    "where is the runbook for notification alerts?",
    "how do feature flags reach the scheduler?",
]


def make_folder(root: Path, count: int = CANDIDATES) -> None:
    """`count` realistic memories with distinct topics and ages."""
    rng = random.Random(7)
    now = time.time()
    for i in range(count):
        system = SYSTEMS[i % len(SYSTEMS)]
        title, template = TOPICS[(i // len(SYSTEMS)) % len(TOPICS)]
        description = template.format(
            s=system,
            m=rng.choice(["holiday", "quarter-end", "audit"]),
            n=rng.choice([50, 100, 200]),
            d=rng.choice(["Tuesday", "Thursday"]),
        )
        kind = TYPES[i % 4]
        folder = root / ("team" if i % 9 == 0 else "")
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{kind}_{system}_{title.replace(' ', '_')}_{i:03d}.md"
        body = (
            f"{description.capitalize()}.\n\n**Why:** an incident in {system} showed it "
            f"matters.\n\n**How to apply:** check this before changing {system}.\n"
        )
        path.write_text(
            f"---\nname: {system} {title}\ndescription: {description}\ntype: {kind}\n---\n\n{body}",
            encoding="utf-8",
        )
        stamp = now - rng.uniform(0, 200) * 86_400
        os.utime(path, (stamp, stamp))


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-recall-") as tmp:
        memory = Path(tmp) / "memory"
        memory.mkdir()
        make_folder(memory)
        env = {"HOME": tmp}

        def cold() -> None:
            engine = Engine.open(tmp, memory_dir=str(memory), env=env)
            engine.recall.recall_offline(QUERIES[0])

        engine = Engine.open(tmp, memory_dir=str(memory), env=env)
        recall = engine.recall
        recall.recall_offline(QUERIES[0])  # import bm25s/PyStemmer and warm the caches
        assert len(recall.candidates()) == CANDIDATES

        documents = [entry[2] for entry in recall._documents.values()]  # noqa: SLF001
        build, _ = median_seconds(lambda: OfflineRanker(documents), runs=7)

        def rebuild_index() -> None:
            recall._ranker = None  # noqa: SLF001 - the benchmark measures the uncached path
            recall._ranker_key = None  # noqa: SLF001
            recall._documents = {}  # noqa: SLF001

        per_query = []
        uncached = []
        for query in QUERIES:
            warm, _ = median_seconds(lambda q=query: recall.recall_offline(q), runs=7)
            per_query.append(warm)

            def no_cache(q: str = query) -> None:
                rebuild_index()
                recall.recall_offline(q)

            slow, _ = median_seconds(no_cache, runs=3)
            uncached.append(slow)
        ranker = recall.ranker()
        rank_only = [median_seconds(lambda q=query: ranker.rank(q), runs=7)[0] for query in QUERIES]
        cold_s, _ = median_seconds(cold, runs=3, warmup=0)

        median_query = statistics.median(per_query)
        report(
            "recall_offline_per_query_200",
            median_query * 1000,
            "ms",
            "< 20 ms",
            f"(median of {len(QUERIES)} query medians; max {max(per_query) * 1000:.2f} ms)",
        )
        report("recall_rank_only_200", statistics.median(rank_only) * 1000, "ms")
        report(
            "recall_index_build_200",
            build * 1000,
            "ms",
            extra="(BM25 indexes over 5 fields, documents already read)",
        )
        report(
            "recall_cold_first_query_200",
            cold_s * 1000,
            "ms",
            extra="(new engine: scan, read 200 heads, build, rank)",
        )
        report(
            "recall_uncached_per_query_200",
            statistics.median(uncached) * 1000,
            "ms",
            extra=f"(index rebuilt per query; cached is "
            f"{statistics.median(uncached) / median_query:.1f}x faster)",
        )

    with tempfile.TemporaryDirectory(prefix="bench-recall-quality-") as tmp:
        engines = engines_for_samples(["healthy", "warnings"], tmp)
        for label, name in (
            ("labelled", "recall_queries.yaml"),
            ("heldout", "recall_queries_heldout.yaml"),
        ):
            queries = load_queries(DATA / name)
            result = evaluate(queries, engines)
            positives = len(result.positives)
            report(
                f"recall_at_5_{label}",
                result.recall_at_5,
                "",
                ">= 0.9" if label == "labelled" else "",
                f"({positives} queries with an expected memory, {len(queries)} in all)",
            )
            report(
                f"precision_at_5_{label}",
                result.precision_at_5,
                "",
                extra="(relevant among selected, at most 5 per query)",
            )


if __name__ == "__main__":
    main()
