"""The rules that changed between releases, and the short probes that tell them apart.

A release is probed with a handful of short `claude -p` runs (a few seconds each); each rule
reads one value off those probes. The bisection (`oracle.bisect`) looks for the first
release whose value differs from 2.1.88's.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from oracle import extract, runner
from oracle.checks.memory_md import lines, memory_dir_rel
from oracle.checks.paths import observe_memory_dir
from oracle.firing import QUIET_TOOLS, FiringSearch
from oracle.releases import Release

PROBE_VERSION = 3
# Scripted probes changed without a version bump keep their other cached probes: delete just
# their keys from the cache files (see `oracle.bisect.forget`).
"""Bump when a probe changes, so cached probe results are measured again."""
DIR_NAME = "oracle-probe-dir"


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    value: Callable[[dict[str, Any]], Any]
    """Reads the rule's value off one release's probe results (None: not measured)."""
    probes: tuple[str, ...] = ("basic",)
    """The probes `value` reads (a bisection step runs only those its open rules need)."""


# --- probes ---------------------------------------------------------------------------------


def _scripted(
    release: Release,
    model: str | None,
    script: list[int],
    env: dict[str, str] | None = None,
    **kw: Any,
) -> dict[str, Any]:
    """One run answering each main call with the next usage of `script` (`model` None: the
    release's default model)."""
    search = FiringSearch(script=list(script))
    search.start_run()
    scenario = runner.Scenario(
        prompt="go",
        args=[*(["--model", model] if model else []), "--disallowedTools", QUIET_TOOLS],
        env=env or {},
        responder=kw.get("responder") or search.respond,
        timeout=180,
    )
    with runner.run(release, scenario) as run:
        search.end_run()
        rows = _rows(run)
    boundaries = [r for r in rows if r.get("subtype") == "compact_boundary"]
    return {
        "ran": bool(run.message_requests),
        "outcomes": [p.outcome for p in search.probes],
        "first_call_compacted": search.first_call_compacted,
        "boundary_keys": sorted((boundaries[0].get("compactMetadata") or {}).keys())
        if boundaries
        else None,
    }


def _rows(run: runner.Run) -> list[dict[str, Any]]:
    found = run.transcripts()
    if not found:
        return []
    out = []
    for line in found[0].read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def probe_basic(release: Release) -> dict[str, Any]:
    """Default model, memory prompt shape, CRLF and U+001F handling, record kinds."""
    scenario = runner.Scenario(prompt="hello")
    with runner.sandbox(scenario) as (box, ready):
        mem = box.config / memory_dir_rel(str(box.project))
        mem.mkdir(parents=True)
        with open(mem / "MEMORY.md", "w", encoding="utf-8", newline="") as handle:
            handle.write("\r\n".join(lines(3)) + "\r\n\x1f")
        run = runner.run_claude(release, ready, box)
        rows = _rows(run)
    first = run.first_main
    if first is None:
        return {"ran": False}
    blocks = [b for b in extract.memory_blocks(first) if "/memory/" in b.path]
    text = blocks[0].text if blocks else None
    section = extract.find_memory_prompt(first)
    return {
        "ran": True,
        "model": first.body.get("model"),
        "max_tokens": first.body.get("max_tokens"),
        "prompt_sections": extract.prompt_shape(section, None).sections if section else None,
        "prompt_chars": len(section) if section else None,
        "index_has_cr": None if text is None else "\r" in text,
        "index_has_1f": None if text is None else "\x1f" in text,
        "record_types": sorted({str(r.get("type")) for r in rows}),
        "attachment_types": sorted(
            {
                str((r.get("attachment") or {}).get("type"))
                for r in rows
                if r.get("type") == "attachment"
            }
        ),
    }


def probe_settings(release: Release) -> dict[str, Any]:
    """autoMemoryDirectory from project settings, CLAUDE_CODE_PROJECT_DIR_NAME, the warning."""
    index = "\n".join(lines(250)) + "\n"
    scenario = runner.Scenario(
        prompt="hello",
        project_settings={"autoMemoryDirectory": "{sandbox}/projmem"},
        env={"CLAUDE_CODE_PROJECT_DIR_NAME": DIR_NAME},
        sandbox_files={"projmem/MEMORY.md": index},
    )
    with runner.sandbox(scenario) as (box, ready):
        for rel in (memory_dir_rel(str(box.project)), f"projects/{DIR_NAME}/memory"):
            (box.config / rel).mkdir(parents=True, exist_ok=True)
            (box.config / rel / "MEMORY.md").write_text(index, encoding="utf-8")
        run = runner.run_claude(release, ready, box)
        memory_dir = observe_memory_dir(run)
        transcripts = run.transcripts()
        root = str(box.root)
        first = run.first_main
        blocks = [b for b in extract.memory_blocks(first) if "MEMORY.md" in b.path] if first else []
    if first is None:
        return {"ran": False}
    warning = blocks[0].text.split(lines(250)[199], 1)[-1] if blocks else ""
    return {
        "ran": True,
        "memory_dir": memory_dir.replace(root, "<sandbox>") if memory_dir else None,
        "transcripts_folder": transcripts[0].parent.name if transcripts else None,
        "warning_quotes_cut_line": lines(250)[200][:24] in warning,
    }


def probe_nfd(release: Release) -> dict[str, Any]:
    scenario = runner.Scenario(prompt="hello", project=unicodedata.normalize("NFD", "café"))
    with runner.run(release, scenario) as run:
        found = run.transcripts()
        # Exiting without a session is the observation here, not a failed probe.
        return {
            "ran": not run.timed_out,
            "session": bool(run.message_requests),
            "folder": found[0].parent.name if found else None,
        }


def probe_reactive(release: Release) -> dict[str, Any]:
    """A 'prompt is too long' answer to the first call: compact and retry, or stop?"""
    from oracle.firing import MISSING_TOOL
    from tests.fakes.messages_api import ScriptedReply, usage_total

    state = {"calls": 0, "summary": False}

    def respond(request):
        if extract.is_summary_request(request):
            state["summary"] = True
            return ScriptedReply.text("<summary>Probe session.</summary>", usage=usage_total(2_000))
        if not runner.is_main_thread(request):
            return None
        state["calls"] += 1
        if state["calls"] <= 3:  # some conversation to compact first
            return ScriptedReply.tool_use(
                [(MISSING_TOOL, {"probe": state["calls"]})],
                text="Probing.",
                usage=usage_total(100_000),
            )
        if state["calls"] == 4:
            return ScriptedReply.prompt_too_long(210_000, 200_000)
        return ScriptedReply.text("Search finished.", usage=usage_total(3_000))

    scenario = runner.Scenario(
        prompt="go",
        args=["--model", "claude-sonnet-4-6", "--disallowedTools", QUIET_TOOLS],
        responder=respond,
        timeout=120,
    )
    with runner.run(release, scenario) as run:
        return {
            "ran": bool(run.message_requests),
            "summary_requested": state["summary"],
            "retried": state["calls"] > 4,
        }


def probe_index_format(release: Release) -> dict[str, Any]:
    """How MEMORY.md is cleaned in what loads, and the memory-file format the prompt asks for."""
    scenario = runner.Scenario(prompt="hello")
    index = "\n".join(lines(3)) + "\nzero\u200bwidth line\u2028separator next\u0085line\n"
    with runner.sandbox(scenario) as (box, ready):
        mem = box.config / memory_dir_rel(str(box.project))
        mem.mkdir(parents=True)
        (mem / "MEMORY.md").write_text(index, encoding="utf-8")
        run = runner.run_claude(release, ready, box)
    first = run.first_main
    if first is None:
        return {"ran": False}
    blocks = [b for b in extract.memory_blocks(first) if "/memory/" in b.path]
    text = blocks[0].text if blocks else None
    section = extract.find_memory_prompt(first) or ""
    nested = re.search(r"(?m)^metadata:[ \t]*\n[ \t]+type:", section) is not None
    return {
        "ran": True,
        "zero_width_removed": None if text is None else "\u200b" not in text,
        "u2028_as_lf": None if text is None else "line\nseparator" in text,
        "nel_removed": None if text is None else "next\u0085line" not in text,
        "prompt_type_at": "metadata" if nested else "top-level" if "type:" in section else None,
        "prompt_kebab_names": "kebab" in section.lower(),
        "prompt_links": "[[" in section,
    }


def probe_aliases(release: Release) -> dict[str, Any]:
    """The model (and output limit) `--model opus`, `sonnet` and `haiku` ask for."""
    out: dict[str, Any] = {"ran": True}
    for alias in ALIASES:
        with runner.run(release, runner.Scenario(prompt="hello", args=["--model", alias])) as run:
            first = run.first_main
        if first is None:
            return {"ran": False}
        out[alias] = {"model": first.body.get("model"), "max_tokens": first.body.get("max_tokens")}
    return out


def probe_default_named(release: Release) -> dict[str, Any]:
    """The default model named with `--model`: does it compact where the unnamed default
    does? (Some releases treat their default differently from the same model named.)"""
    with runner.run(release, runner.Scenario(prompt="hello")) as run:
        first = run.first_main
    if first is None:
        return {"ran": False}
    model = str(first.body.get("model"))
    return {**_scripted(release, model, SCRIPTS["opus_5_5"]), "model": model}


ALIASES = ("opus", "sonnet", "haiku")
UNKNOWN_MODEL = "claude-oracle-probe-9"
"""A model name no release knows (the rule for models missing from the table)."""
WARM_UP = 10_000
"""Each scripted probe starts with a quiet call: newer releases never compact after a
session's first reply (the `first-response` rule), which would hide a threshold."""
SCRIPTS = {
    "first_turn": [170_000, 170_000],
    "no_threshold": [WARM_UP, 170_000, 400_000],
    "k_suffix": [WARM_UP, 50_000, 120_000],
    "window_floor": [WARM_UP, 20_000, 70_000],
    "opus_5_5": [WARM_UP, 170_000, 900_000, 970_000],
    # CLAUDE_CODE_AUTO_COMPACT_WINDOW=150000 puts the threshold at 117,000 for every model;
    # the first probe that compacts tells how the count after the last usage was taken: one
    # tool exchange is 31 tokens (53 with a token-total reminder), padded by 4/3 or not.
    "padding": [WARM_UP, 116_930, 116_950, 116_960, 116_970, 116_990],
    "unknown_model": [WARM_UP, 170_000, 900_000, 970_000],
    "blocking_override": [WARM_UP, 99_000, 101_000],
}

PROBES: dict[str, Callable[[Release], dict[str, Any]]] = {
    "basic": probe_basic,
    "settings": probe_settings,
    "nfd": probe_nfd,
    "first_turn": lambda r: _scripted(r, "claude-sonnet-4-6", SCRIPTS["first_turn"]),
    "no_threshold": lambda r: _scripted(r, "claude-sonnet-4-5", SCRIPTS["no_threshold"]),
    "k_suffix": lambda r: _scripted(
        r, "claude-sonnet-4-6", SCRIPTS["k_suffix"], {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "150k"}
    ),
    "window_floor": lambda r: _scripted(
        r,
        "claude-sonnet-4-6",
        SCRIPTS["window_floor"],
        {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "50000"},
    ),
    "opus_5_5": lambda r: _scripted(r, "claude-opus-5-5", SCRIPTS["opus_5_5"]),
    "blocking_override": lambda r: _scripted(
        r,
        "claude-sonnet-4-6",
        SCRIPTS["blocking_override"],
        {"CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE": "100000"},
    ),
    "reactive": probe_reactive,
    "index_format": probe_index_format,
    "aliases": probe_aliases,
    "padding": lambda r: _scripted(
        r, "claude-opus-5-5", SCRIPTS["padding"], {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "150000"}
    ),
    "unknown_model": lambda r: _scripted(r, UNKNOWN_MODEL, SCRIPTS["unknown_model"]),
    "default_window": lambda r: _scripted(r, None, SCRIPTS["opus_5_5"]),
    "default_named": probe_default_named,
    "default_padding": lambda r: _scripted(
        r, None, SCRIPTS["padding"], {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "150000"}
    ),
}


def probe_release(
    release: Release, *, names: set[str] | None = None, jobs: int = 2
) -> dict[str, Any]:
    """The probes `names` (default: all) on one release, a few short runs `jobs` at a time."""
    results: dict[str, Any] = {"version": release.version, "probe_version": PROBE_VERSION}
    chosen = {n: fn for n, fn in PROBES.items() if names is None or n in names}
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {name: pool.submit(fn, release) for name, fn in chosen.items()}
        for name, future in futures.items():
            try:
                results[name] = future.result()
            except Exception as exc:  # a release that crashes on a probe: not measured
                results[name] = {"ran": False, "error": f"{type(exc).__name__}: {exc}"}
    return results


# --- the rules --------------------------------------------------------------------------------


def _get(probes: dict[str, Any], name: str, key: str) -> Any:
    got = probes.get(name) or {}
    return got.get(key) if got.get("ran") else None


def _negate(value: Any) -> Any:
    return None if value is None else not value


def _first_fire(probes: dict[str, Any], name: str, script: list[int]) -> Any:
    got = probes.get(name) or {}
    if not got.get("ran"):
        return None
    if got.get("first_call_compacted"):
        return "before the first call"
    for usage, outcome in zip(script, got.get("outcomes") or [], strict=False):
        if outcome != "none":
            return f"{outcome} at {usage:,}"
    return "none"


def _first_turn(probes: dict[str, Any]) -> Any:
    got = probes.get("first_turn") or {}
    if not got.get("ran"):
        return None
    first = (got.get("outcomes") or ["?"])[0]
    return "after the first reply" if first == "compact" else "not before the second reply"


def _new_kinds(probes: dict[str, Any], kinds: tuple[str, ...], key: str) -> Any:
    present = _get(probes, "basic", key)
    if present is None:
        return None
    return sorted(k for k in kinds if k in present)


def _partial(probes: dict[str, Any]) -> Any:
    for name in ("opus_5_5", "no_threshold", "k_suffix"):
        keys = (probes.get(name) or {}).get("boundary_keys")
        if keys is not None:
            return "preserved segment" if "preservedSegment" in keys else "full"
    return None


def _dir_name(probes: dict[str, Any]) -> Any:
    folder = _get(probes, "settings", "transcripts_folder")
    return None if folder is None else folder == DIR_NAME


def _project_amd(probes: dict[str, Any]) -> Any:
    memory_dir = _get(probes, "settings", "memory_dir")
    return None if memory_dir is None else memory_dir.startswith("<sandbox>/projmem")


def _nfd(probes: dict[str, Any]) -> Any:
    got = probes.get("nfd") or {}
    if "error" in got:
        return None
    if "session" not in got:  # results cached before `session` was split out of `ran`
        return "runs" if got.get("ran") else "exits"
    if not got.get("ran"):
        return None  # timed out
    return "runs" if got["session"] else "exits"


def _reactive(probes: dict[str, Any]) -> Any:
    got = probes.get("reactive") or {}
    if not got.get("ran"):
        return None
    return "compacts and retries" if got.get("summary_requested") else "stops with the error"


def _prompt(probes: dict[str, Any]) -> Any:
    sections = _get(probes, "basic", "prompt_sections")
    chars = _get(probes, "basic", "prompt_chars")
    if sections is None or chars is None:
        return None
    return f"{sections} sections, {extract.size_band(chars)}"


def _cleaning(probes: dict[str, Any]) -> Any:
    got = probes.get("index_format") or {}
    if not got.get("ran") or got.get("zero_width_removed") is None:
        return None
    done = [
        label
        for key, label in (
            ("zero_width_removed", "invisible characters removed"),
            ("nel_removed", "C1 controls removed"),
            ("u2028_as_lf", "U+2028 as LF"),
        )
        if got.get(key)
    ]
    return ", ".join(done) or "none"


def _file_format(probes: dict[str, Any]) -> Any:
    got = probes.get("index_format") or {}
    if not got.get("ran") or got.get("prompt_type_at") is None:
        return None
    parts = [f"type {'under metadata' if got['prompt_type_at'] == 'metadata' else 'top-level'}"]
    if got.get("prompt_kebab_names"):
        parts.append("kebab-case names")
    if got.get("prompt_links"):
        parts.append("[[name]] links")
    return ", ".join(parts)


def _alias(alias: str) -> Callable[[dict[str, Any]], Any]:
    def value(probes: dict[str, Any]) -> Any:
        got = probes.get("aliases") or {}
        return (got.get(alias) or {}).get("model") if got.get("ran") else None

    return value


RULES: tuple[Rule, ...] = (
    Rule("default-model", "the default model", lambda p: _get(p, "basic", "model")),
    Rule(
        "first-response",
        "the first reply over the threshold: when auto-compaction can fire",
        _first_turn,
        probes=("first_turn",),
    ),
    Rule(
        "no-threshold-models",
        "claude-sonnet-4-5: where it compacts (probes at 170,000 and 400,000)",
        lambda p: _first_fire(p, "no_threshold", SCRIPTS["no_threshold"]),
        probes=("no_threshold",),
    ),
    Rule(
        "opus-5-5-window",
        "claude-opus-5-5: where it compacts (probes at 170,000, 900,000, 970,000)",
        lambda p: _first_fire(p, "opus_5_5", SCRIPTS["opus_5_5"]),
        probes=("opus_5_5",),
    ),
    Rule(
        "k-suffix",
        "CLAUDE_CODE_AUTO_COMPACT_WINDOW=150k (probes at 50,000 and 120,000)",
        lambda p: _first_fire(p, "k_suffix", SCRIPTS["k_suffix"]),
        probes=("k_suffix",),
    ),
    Rule(
        "window-floor",
        "CLAUDE_CODE_AUTO_COMPACT_WINDOW=50000 (probes at 20,000 and 70,000)",
        lambda p: _first_fire(p, "window_floor", SCRIPTS["window_floor"]),
        probes=("window_floor",),
    ),
    Rule(
        "blocking-override-compacts",
        "CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE=100000, auto-compact on (probes at 99,000, 101,000)",
        lambda p: _first_fire(p, "blocking_override", SCRIPTS["blocking_override"]),
        probes=("blocking_override",),
    ),
    Rule(
        "crlf-conversion",
        "MEMORY.md CRLF line ends converted to LF in what loads",
        lambda p: _negate(_get(p, "basic", "index_has_cr")),
    ),
    Rule(
        "trim-u001f",
        "a trailing U+001F trimmed from MEMORY.md",
        lambda p: _negate(_get(p, "basic", "index_has_1f")),
    ),
    Rule(
        "truncation-warning-detail",
        "the truncation warning quotes the first line cut off",
        lambda p: _get(p, "settings", "warning_quotes_cut_line"),
        probes=("settings",),
    ),
    Rule(
        "project-auto-memory-directory",
        "autoMemoryDirectory honoured from project settings",
        _project_amd,
        probes=("settings",),
    ),
    Rule(
        "project-dir-name",
        "CLAUDE_CODE_PROJECT_DIR_NAME names the project folder",
        _dir_name,
        probes=("settings",),
    ),
    Rule("nfd-project-folder", "a project folder named in NFD", _nfd, probes=("nfd",)),
    Rule("memory-prompt-shape", "the memory prompt's structure", _prompt),
    Rule(
        "partial-compaction",
        "compaction keeps a preserved segment",
        _partial,
        probes=("opus_5_5",),
    ),
    Rule(
        "reactive-compaction",
        "what a 'prompt is too long' error does",
        _reactive,
        probes=("reactive",),
    ),
    Rule(
        "record-kinds-attachment",
        "transcripts gain attachment records",
        lambda p: _new_kinds(p, ("attachment",), "record_types"),
    ),
    Rule(
        "record-kinds-api-request",
        "transcripts gain api-request records",
        lambda p: _new_kinds(
            p, ("api-request", "api-request-blob", "api-request-shape"), "record_types"
        ),
    ),
    Rule(
        "record-kinds-prompt-snapshot",
        "transcripts gain prompt_snapshot attachments",
        lambda p: _new_kinds(p, ("prompt_snapshot",), "attachment_types"),
    ),
    Rule(
        "default-max-output",
        "the output limit the default model asks for",
        lambda p: _get(p, "basic", "max_tokens"),
    ),
    Rule(
        "index-cleaning",
        "MEMORY.md: what is cleaned out of the loaded text (a zero-width space, a NEL, U+2028)",
        _cleaning,
        probes=("index_format",),
    ),
    Rule(
        "memory-file-format",
        "the memory-file format the memory prompt asks for",
        _file_format,
        probes=("index_format",),
    ),
    Rule(
        "estimate-padding",
        "claude-opus-5-5 with CLAUDE_CODE_AUTO_COMPACT_WINDOW=150000: the first usage that "
        "compacts (116,930: padded count with a token reminder; 116,950: unpadded with one; "
        "116,960: padded; 116,970: unpadded)",
        lambda p: _first_fire(p, "padding", SCRIPTS["padding"]),
        probes=("padding",),
    ),
    Rule(
        "unknown-model",
        f"{UNKNOWN_MODEL}, a model no release knows: where it compacts (probes at 170,000, "
        "900,000, 970,000)",
        lambda p: _first_fire(p, "unknown_model", SCRIPTS["unknown_model"]),
        probes=("unknown_model",),
    ),
    Rule(
        "default-model-window",
        "the default model: where it compacts (probes at 170,000, 900,000, 970,000)",
        lambda p: _first_fire(p, "default_window", SCRIPTS["opus_5_5"]),
        probes=("default_window",),
    ),
    Rule(
        "default-model-named-window",
        "the default model named with --model: where it compacts (probes as above)",
        lambda p: _first_fire(p, "default_named", SCRIPTS["opus_5_5"]),
        probes=("default_named",),
    ),
    Rule(
        "default-model-padding",
        "the default model with CLAUDE_CODE_AUTO_COMPACT_WINDOW=150000: the first usage that "
        "compacts (as for estimate-padding)",
        lambda p: _first_fire(p, "default_padding", SCRIPTS["padding"]),
        probes=("default_padding",),
    ),
    *(
        Rule(f"alias-{alias}", f"the model `--model {alias}` asks for", _alias(alias), ("aliases",))
        for alias in ALIASES
    ),
)

RULES_BY_ID = {rule.id: rule for rule in RULES}


def describe(value: Any) -> str:
    if value is None:
        return "not measured"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(value) if value else "none"
    return re.sub(r"\s+", " ", str(value))
