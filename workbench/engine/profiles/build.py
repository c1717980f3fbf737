"""A release's families of rules, built from the values its timeline gives it.

`timeline.py` says which value every rule has in a release; here those values become the
objects the engine asks (`ModelRules`, `IndexLoadRules`, …). The facts that do not change
between releases (2.1.88's model table, the observed rows of newer models, the notes) come
from `legacy.py` and `current.py`. Equal values give the same object (`lru_cache`), so
families compare by identity.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from workbench.engine.profiles import current, legacy
from workbench.engine.profiles.records import (
    LEGACY_ATTACHMENT_TYPES,
    LEGACY_RECORD_TYPES,
    NEW_ATTACHMENT_TYPES,
    NEW_RECORD_TYPES,
)
from workbench.engine.profiles.rules import (
    AutoCompactRules,
    CompactWindowRules,
    IndexLoadRules,
    MemoryFileRules,
    ModelRow,
    ModelRules,
    PartialCompactionRules,
    ProjectDirRules,
    PromptRules,
    ReactiveRules,
    RecordRules,
    SettingsRules,
    UnicodePathRules,
)


def _padded(row: ModelRow, padding: bool) -> ModelRow:
    if row.estimate_padding == padding:
        return row
    return ModelRow(
        row.match,
        row.window,
        row.default_output,
        row.upper_output,
        threshold_compaction=row.threshold_compaction,
        estimate_padding=padding,
        known_from=row.known_from,
        note=row.note,
    )


@cache
def models(
    default_model: str,
    alias_opus: str,
    alias_sonnet: str,
    alias_haiku: str,
    newer: tuple[str, ...],
    newer_window: str,
    no_threshold: bool,
    opus_5_5: str,
    unknown: str,
    padding: bool,
) -> ModelRules:
    old = {row.match: row for row in legacy.OUTPUT_ROWS}
    rows: list[ModelRow] = []
    if opus_5_5 != "unlisted":
        rows.append(_padded(current.opus_5_5_row(opus_5_5), padding))
    if newer_window != "unlisted":
        rows += [
            _padded(current.newer_row(m, newer_window), padding)
            for m in current.NEWER_ORDER
            if m in newer
        ]
    if no_threshold:
        rows += current.OBSERVED_ROWS.values()
        rows += [current.assumed(old[m]) for m in current.UNCHANGED_ROWS]
    else:
        rows += legacy.OUTPUT_ROWS
    return ModelRules(
        default_model=default_model,
        default_model_known_from="source" if default_model == "claude-sonnet-4-6" else "observed",
        aliases={
            "sonnet": alias_sonnet,
            "opus": alias_opus,
            "haiku": alias_haiku,
            "sonnet[1m]": f"{alias_sonnet}[1m]",
            "opus[1m]": f"{alias_opus}[1m]",
        },
        aliases_known_from="source" if alias_opus == "claude-opus-4-6" else "observed",
        canonical_names=(*current.NEWER_NAMES, *legacy.CANONICAL_NAMES),
        rows=tuple(rows),
        fallback=_padded(current.fallback_row(unknown), padding),
        window_override_enables_threshold=no_threshold,
        blocking_without_threshold=not no_threshold,
    )


@cache
def compact_window(suffixes: bool, floor: int | None) -> CompactWindowRules:
    return CompactWindowRules(suffixes=suffixes, floor=floor)


@cache
def auto_compact(after_first_reply: bool, blocking_override: str) -> AutoCompactRules:
    return AutoCompactRules(
        checks_after_first_reply=after_first_reply,
        blocking_override=blocking_override,  # type: ignore[arg-type]
    )


@cache
def reactive(compacts: bool) -> ReactiveRules:
    return ReactiveRules(compacts_on_prompt_too_long=compacts)


@cache
def partial(keeps: bool) -> PartialCompactionRules:
    return current.PARTIAL if keeps else legacy.PARTIAL


@cache
def settings(project: bool) -> SettingsRules:
    return current.SETTINGS if project else legacy.SETTINGS


@cache
def project_dir(env: bool) -> ProjectDirRules:
    return current.PROJECT_DIR if env else legacy.PROJECT_DIR


@cache
def unicode_paths(runs: bool) -> UnicodePathRules:
    return current.UNICODE if runs else legacy.UNICODE


@cache
def index(cleans: bool, quotes: bool) -> IndexLoadRules:
    notes = current.INDEX.notes if quotes else ()
    return IndexLoadRules(cleans_text=cleans, warning_quotes_cut=quotes, notes=notes)


@cache
def memory_files(nested: bool) -> MemoryFileRules:
    return current.MEMORY_FILES if nested else legacy.MEMORY_FILES


@cache
def prompt(flat: bool) -> PromptRules:
    return current.PROMPT if flat else legacy.PROMPT


_API_REQUESTS = frozenset({"api-request", "api-request-blob", "api-request-shape"})


@cache
def records(attachments: bool, snapshots: bool, api_requests: bool) -> RecordRules:
    kinds = set(LEGACY_RECORD_TYPES)
    subtypes = set(LEGACY_ATTACHMENT_TYPES)
    if attachments:
        # Record kinds and subtypes not bisected one by one arrive with the attachments.
        kinds |= NEW_RECORD_TYPES.keys() - _API_REQUESTS
        subtypes |= NEW_ATTACHMENT_TYPES.keys() - {"prompt_snapshot"}
    if snapshots:
        subtypes.add("prompt_snapshot")
    if api_requests:
        kinds |= _API_REQUESTS
    return RecordRules(record_types=frozenset(kinds), attachment_types=frozenset(subtypes))


def dream(gates_known: bool) -> Any:
    return legacy.DREAM if gates_known else current.DREAM


def observability(unobserved: bool) -> Any:
    return current.OBSERVABILITY if unobserved else legacy.OBSERVABILITY


FAMILIES: dict[str, tuple[tuple[str, ...], Callable[..., Any]]] = {
    "models": (
        (
            "default-model",
            "alias-opus",
            "alias-sonnet",
            "alias-haiku",
            "newer-models",
            "newer-model-window",
            "no-threshold-models",
            "opus-5-5-window",
            "unknown-model",
            "estimate-padding",
        ),
        models,
    ),
    "compact-window": (("k-suffix", "window-floor"), compact_window),
    "auto-compact": (("first-response", "blocking-override"), auto_compact),
    "reactive-compaction": (("reactive-compaction",), reactive),
    "partial-compaction": (("partial-compaction",), partial),
    "settings": (("project-auto-memory-directory",), settings),
    "project-dir-name": (("project-dir-name",), project_dir),
    "unicode-paths": (("nfd-project-folder",), unicode_paths),
    "index-loading": (("index-cleaning", "truncation-warning-detail"), index),
    "memory-files": (("memory-file-format",), memory_files),
    "memory-prompt": (("memory-prompt-shape",), prompt),
    "transcript-records": (
        ("record-kinds-attachment", "record-kinds-prompt-snapshot", "record-kinds-api-request"),
        records,
    ),
    "auto-dream": (("auto-dream",), dream),
    "observability": (("observability",), observability),
}
"""Family → (the rules it is made of, in argument order; the function that builds it)."""
