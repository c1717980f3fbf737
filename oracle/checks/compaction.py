"""Auto-compaction firing points per model and override, and the transcripts they leave.

For each case a `FiringSearch` finds the smallest reported usage at which Claude Code
compacts (or blocks), to one token. A fresh confirmation run then reports exactly one token
under it and then it, so its transcript holds the firing point and nothing else; the
workbench's `gauge`, `replay` and `transcripts` read that transcript in the same sandbox with
the same environment.

Two checks share these runs: `autocompact` (does the workbench predict the same firing
point?) and `transcripts` (does it read what Claude Code recorded: compactions, their
preTokens, no false peaks?).
"""

from __future__ import annotations

import json
import statistics
import threading
from dataclasses import dataclass, field
from typing import Any

from oracle import runner
from oracle.checks.base import AGREE, DIFFER, ERROR, Case, Check, Outcome, scrub, tail
from oracle.firing import QUIET_TOOLS, SEARCH_CEILING, FiringSearch
from oracle.releases import Release
from oracle.sanitize import sanitize_transcript

W = "CLAUDE_CODE_AUTO_COMPACT_WINDOW"
PCT = "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"
MAX_RUNS = 8
COMMON_THRESHOLDS = (67_000, 90_000, 100_000, 117_000, 167_000, 177_000, 179_000, 967_000, 977_000)
"""Probed on the way up (just under and over each), so most searches bracket at once."""
PEAK_TOLERANCE = 64
"""Tokens a replay's peak may sit above Claude Code's own largest count (rounding)."""


def _case(name: str, model: str, env: dict[str, str] | None = None, **kw: Any) -> Case:
    title = kw.pop("title", None) or (
        model + (" with " + ", ".join(f"{k}={v}" for k, v in env.items()) if env else "")
    )
    return Case(name, title, {"model": model, "env": env or {}, **kw.pop("data", {})}, **kw)


def _cases() -> list[Case]:
    no_threshold = "no-threshold-models"
    return [
        _case("sonnet-4-6", "claude-sonnet-4-6"),
        _case("opus-4-6", "claude-opus-4-6"),
        _case("opus-4-7", "claude-opus-4-7"),
        _case("opus-4-8", "claude-opus-4-8"),
        _case("opus-5", "claude-opus-5"),
        _case("opus-5-5", "claude-opus-5-5", rule="opus-5-5-window"),
        _case("sonnet-5-5", "claude-sonnet-5-5"),
        _case("haiku-5-5", "claude-haiku-5-5"),
        _case("unknown-model", "claude-oracle-probe-9", rule="unknown-model"),
        _case(
            "unknown-model-window-150000",
            "claude-oracle-probe-9",
            {W: "150000"},
            rule="unknown-model",
        ),
        _case("sonnet-4-5", "claude-sonnet-4-5", rule=no_threshold),
        _case("haiku-4-5", "claude-haiku-4-5", rule=no_threshold),
        _case("3-5-haiku", "claude-3-5-haiku", rule=no_threshold),
        _case("sonnet-4-5-1m", "claude-sonnet-4-5[1m]", rule=no_threshold),
        _case("window-150000", "claude-sonnet-4-6", {W: "150000"}),
        _case("window-150k", "claude-sonnet-4-6", {W: "150k"}, rule="k-suffix"),
        _case("window-50000", "claude-sonnet-4-6", {W: "50000"}, rule="window-floor"),
        _case("pct-50", "claude-sonnet-4-6", {PCT: "50"}),
        _case("max-output-8000", "claude-sonnet-4-6", {"CLAUDE_CODE_MAX_OUTPUT_TOKENS": "8000"}),
        _case("disable-auto", "claude-sonnet-4-6", {"DISABLE_AUTO_COMPACT": "1"}),
        _case(
            "blocking-override",
            "claude-sonnet-4-6",
            {"DISABLE_AUTO_COMPACT": "1", "CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE": "100000"},
        ),
        _case(
            "blocking-override-auto-on",
            "claude-sonnet-4-6",
            {"CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE": "100000"},
            rule="blocking-override-compacts",
        ),
        _case(
            "blocking-override-190000-auto-on",
            "claude-sonnet-4-6",
            {"CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE": "190000"},
            rule="blocking-override-compacts",
        ),
        _case(
            "opus-5-5-window-150000",
            "claude-opus-5-5",
            {W: "150000"},
            rule="estimate-padding",
        ),
        _case("sonnet-4-5-window-200000", "claude-sonnet-4-5", {W: "200000"}, rule=no_threshold),
        _case("sonnet-4-5-pct-50", "claude-sonnet-4-5", {PCT: "50"}, rule=no_threshold),
    ]


# --- the shared runs -------------------------------------------------------------------------


@dataclass
class Firing:
    """One case searched and confirmed on one release, with the workbench's readings."""

    case: Case
    release: str
    search: dict[str, Any]
    confirm: dict[str, Any] = field(default_factory=dict)
    transcript: dict[str, Any] = field(default_factory=dict)
    """What the confirmation transcript records (boundaries, models, largest usage)."""
    gauge: dict[str, Any] | None = None
    replay: dict[str, Any] | None = None
    sessions: list[dict[str, Any]] | None = None
    recording: list[dict[str, Any]] | None = None
    """The confirmation transcript, sanitised, for tests/data."""
    error: str | None = None
    seconds: float = 0.0


_memo: dict[tuple[str, str], Firing] = {}
_memo_locks: dict[tuple[str, str], threading.Lock] = {}
_memo_guard = threading.Lock()


def firing(release: Release, case: Case) -> Firing:
    """The (memoised) search, confirmation and workbench readings for one case."""
    key = (release.version, case.name)
    with _memo_guard:
        lock = _memo_locks.setdefault(key, threading.Lock())
    with lock:
        if key not in _memo:
            _memo[key] = _measure(release, case)
        return _memo[key]


def _args(case: Case) -> list[str]:
    return ["--model", case.data["model"], "--disallowedTools", QUIET_TOOLS]


def _measure(release: Release, case: Case) -> Firing:
    env = dict(case.data["env"])
    hints = tuple(h for h in case.data.get("hints", ()) if h > 0) or COMMON_THRESHOLDS
    search = FiringSearch(hints=hints)
    seconds = 0.0
    for _ in range(MAX_RUNS):
        search.start_run()
        scenario = runner.Scenario(
            prompt="go", args=_args(case), env=env, responder=search.respond, timeout=300
        )
        with runner.run(release, scenario) as run:
            search.end_run()
            seconds += run.seconds
            if not run.message_requests:
                return Firing(case, release.version, search.to_json(), error=_why(run))
        if search.done:
            break
    result = Firing(case, release.version, search.to_json(), seconds=seconds)
    if not search.done:
        result.error = f"search not finished after {MAX_RUNS} runs"
        return result
    # The confirmation: one token under the firing point, then the point itself.
    if search.first_call_compacted:
        script: list[int] = [10_000]
    elif search.hi is None:
        # Not as the session's first reply: newer releases never compact after that one.
        script = [10_000, SEARCH_CEILING]
    else:
        script = [search.hi - 1, search.hi]
    confirm = FiringSearch(script=list(script))
    confirm.start_run()
    scenario = runner.Scenario(
        prompt="go", args=_args(case), env=env, responder=confirm.respond, timeout=300
    )
    with runner.run(release, scenario) as run:
        confirm.end_run()
        result.seconds += run.seconds
        result.confirm = {
            "script": script,
            "probes": [{"usage": p.usage, "outcome": p.outcome} for p in confirm.probes],
            "first_call_compacted": confirm.first_call_compacted,
            "exit_code": run.returncode,
        }
        found = run.transcripts()
        if not found:
            result.error = f"the confirmation run wrote no transcript: {_why(run)}"
            return result
        path = found[0]
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
        result.transcript = summarise_transcript(rows)
        # A `[1m]` session records the bare model name: the user has to say which it was.
        wb_model = ["--model", case.data["model"]] if "[1m]" in case.data["model"] else []
        env_run = run.env()
        common = {"env": env_run, "claude_version": release.version}
        gauge = runner.workbench(run.sandbox, ["gauge", str(path), *wb_model], **common)
        replay = runner.workbench(run.sandbox, ["replay", str(path), *wb_model], **common)
        sessions = runner.workbench(run.sandbox, ["transcripts"], **common)
        root = str(run.sandbox.root)
        result.gauge = scrub(gauge.json(), root) if gauge.returncode == 0 else None
        result.replay = scrub(replay.json(), root) if replay.returncode == 0 else None
        result.sessions = scrub(sessions.json(), root) if sessions.returncode == 0 else None
        if result.gauge is None or result.replay is None:
            result.error = f"workbench failed: {tail(gauge.stderr + replay.stderr)}"
        result.recording = sanitize_transcript(rows, root)
    return result


def _why(run: runner.Run) -> str:
    if run.timed_out:
        return "timed out"
    return f"exit {run.returncode}: {tail(run.stderr or run.stdout) or 'no output'}"


def summarise_transcript(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """What Claude Code recorded: its compactions, the usage it was told, the models."""
    boundaries = [
        {
            "trigger": (r.get("compactMetadata") or {}).get("trigger"),
            "pre_tokens": (r.get("compactMetadata") or {}).get("preTokens"),
            "metadata_keys": sorted((r.get("compactMetadata") or {}).keys()),
        }
        for r in rows
        if r.get("type") == "system" and r.get("subtype") == "compact_boundary"
    ]
    totals = []
    models = set()
    for r in rows:
        message = r.get("message") if isinstance(r.get("message"), dict) else {}
        if r.get("type") == "assistant" and isinstance(message.get("usage"), dict):
            u = message["usage"]
            totals.append(
                sum(
                    int(u.get(k) or 0)
                    for k in (
                        "input_tokens",
                        "cache_creation_input_tokens",
                        "cache_read_input_tokens",
                        "output_tokens",
                    )
                )
            )
            if message.get("model"):
                models.add(message["model"])
    kinds = sorted({str(r.get("type")) for r in rows})
    return {
        "compactions": boundaries,
        "usage_totals": totals,
        "models": sorted(models),
        "record_types": kinds,
        "attachment_types": sorted(
            {
                str((r.get("attachment") or {}).get("type"))
                for r in rows
                if r.get("type") == "attachment"
            }
        ),
        "versions": sorted({str(r["version"]) for r in rows if r.get("version")}),
        "lines": len(rows),
    }


# --- autocompact ------------------------------------------------------------------------------


def trailing_estimate(replay: dict[str, Any]) -> int | None:
    """The workbench's estimate of what follows a probe's usage (one tool result)."""
    turns = replay.get("turns") or []
    gaps = []
    for before, after in zip(turns, turns[1:], strict=False):
        if before["segment"] == after["segment"]:
            total = before["context_tokens"] + before["output_tokens"]
            gaps.append(after["estimated_before"] - total)
    if not gaps:
        return None
    return int(statistics.median(gaps))


def predicted_event(gauge: dict[str, Any], d_wb: int) -> tuple[str | None, int | None]:
    """The first usage at which the workbench says Claude Code acts, and how."""
    thresholds = gauge.get("thresholds") or {}
    events = []
    ac = thresholds.get("autocompact")
    if gauge.get("auto_compact_enabled") and isinstance(ac, int):
        events.append((ac - padded(d_wb, gauge.get("estimate_padding")), 0, "compact"))
    blocking = thresholds.get("blocking")
    if isinstance(blocking, int):
        events.append((blocking - d_wb, 1, "stop"))
    if not events:
        return None, None
    usage, _, kind = min(events)
    return kind, usage


def padded(estimate: int, padding: object) -> int:
    """The estimate after the last usage as the check counts it: padded by 4/3, rounded up,
    where the release pads for the model (the recorded preTokens is unpadded)."""
    return -(-estimate * 4 // 3) if padding else estimate


def run_autocompact(release: Release, case: Case) -> Outcome:
    out = _autocompact(release, case)
    if out.verdict in (AGREE, DIFFER) and out.workbench.get("thresholds") is not None:
        out.workbench["threshold_verdict"] = threshold_verdict(out.observed, out.workbench)
    return out


def threshold_verdict(observed: dict[str, Any], workbench: dict[str, Any]) -> str:
    """Whether the workbench's threshold is where Claude Code acted (its own estimate aside)."""
    thresholds = workbench.get("thresholds") or {}
    ac = thresholds.get("autocompact")
    compacts = ac if workbench.get("auto_compact_enabled") and isinstance(ac, int) else None
    blocks = thresholds.get("blocking") if isinstance(thresholds.get("blocking"), int) else None
    event, count = str(observed.get("event")), observed.get("claude_count_at_fire")
    if event.startswith("none"):
        ok = (compacts is None or compacts > SEARCH_CEILING) and (
            blocks is None or blocks > SEARCH_CEILING
        )
    elif event == "compacts before the first call":
        ok = compacts is not None and isinstance(count, int) and compacts <= count
    elif event == "compact":
        trailing = observed.get("claude_trailing_estimate") or 0
        slack = padded(trailing, workbench.get("estimate_padding")) - trailing
        ok = compacts is not None and isinstance(count, int) and compacts - count == slack
    elif event == "stop":
        ok = isinstance(count, int) and blocks == count and (compacts is None or compacts > count)
    else:
        ok = False
    return AGREE if ok else DIFFER


def _autocompact(release: Release, case: Case) -> Outcome:
    f = firing(release, case)
    out = Outcome("autocompact", case.name, release.version, AGREE, rule=case.rule)
    out.inputs = {"model": case.data["model"], "env": case.data["env"]}
    out.seconds = f.seconds
    out.observed = {"search": f.search, "confirm": f.confirm}
    if f.error or f.gauge is None or f.replay is None:
        out.verdict, out.reason = ERROR, f.error or "no workbench reading"
        return out
    s = f.search
    expected = _expected_confirm(s)
    got = [p["outcome"] for p in f.confirm.get("probes", [])]
    if expected is not None and got != expected:
        out.verdict = ERROR
        out.reason = (
            f"the firing point did not reproduce in a fresh session: probes "
            f"{f.confirm.get('script')} gave {got}, expected {expected}"
        )
        return out
    boundaries = f.transcript["compactions"]
    cc_count = boundaries[-1]["pre_tokens"] if boundaries else None
    out.observed["claude_count_at_fire"] = cc_count
    d_wb = trailing_estimate(f.replay)
    thresholds = f.gauge.get("thresholds") or {}
    out.workbench = {
        "model": f.gauge.get("model"),
        "context_window": f.gauge.get("context_window"),
        "auto_compact_enabled": f.gauge.get("auto_compact_enabled"),
        "estimate_padding": f.gauge.get("estimate_padding"),
        "thresholds": thresholds,
        "trailing_estimate": d_wb,
    }
    if s["first_call_compacted"]:
        ac = thresholds.get("autocompact")
        fires_first = bool(f.gauge.get("auto_compact_enabled")) and isinstance(ac, int)
        fires_first = fires_first and cc_count is not None and ac <= cc_count
        out.observed["event"] = "compacts before the first call"
        if not fires_first:
            out.verdict = DIFFER
            out.reason = (
                f"Claude Code compacts before the first call; the workbench's threshold is {_n(ac)}"
            )
        return out
    if d_wb is None:
        d_wb = 0
    kind, usage = predicted_event(f.gauge, d_wb)
    if usage is not None and usage > SEARCH_CEILING:
        kind, usage = None, None
    out.workbench["predicted"] = {"event": kind, "usage": usage}
    if not s["fired"]:
        out.observed["event"] = f"none up to {SEARCH_CEILING:,}"
        if kind is not None:
            out.verdict = DIFFER
            out.reason = (
                f"Claude Code neither compacts nor blocks up to {SEARCH_CEILING:,} tokens; the "
                f"workbench predicts a {_verb(kind)} at a count of {_n(usage + d_wb)}"
            )
        return out
    hi, outcome = s["first_firing_usage"], s["outcome"]
    d_cc = cc_count - hi if (outcome == "compact" and cc_count is not None) else None
    derived = False
    if outcome == "stop" and case.name != BASE_CASE:
        # A block records no count; the same model's tool exchange costs the same tokens.
        base_d = _base_trailing(release)
        if case.data["model"] == BASE_MODEL and base_d is not None:
            d_cc, derived = base_d, True
            out.observed["claude_count_at_fire"] = hi + d_cc
    out.observed["event"] = outcome
    out.observed["claude_trailing_estimate"] = d_cc
    out.observed["count_derived_from"] = BASE_CASE if derived else None
    if kind is None:
        out.verdict = DIFFER
        out.reason = (
            f"Claude Code {_verb3(outcome)} at a reported usage of {hi:,}; the workbench "
            "predicts nothing"
        )
        return out
    if kind == outcome and usage == hi:
        return out
    out.verdict = DIFFER
    count = f"count {hi + d_cc:,}" if d_cc is not None else f"usage {hi:,}"
    ours = thresholds.get("autocompact" if kind == "compact" else "blocking")
    parts = [
        f"Claude Code {_verb3(outcome)} at {count}",
        f"the workbench predicts a {_verb(kind)} at {_n(ours)}",
    ]
    if d_cc is not None and kind == outcome and isinstance(ours, int):
        if ours == hi + d_cc and d_wb != d_cc:
            out.rule = "record-kinds-prompt-snapshot" if d_wb - d_cc > 1_000 else out.rule
            parts = [
                f"same threshold ({ours:,}), but the workbench counts {d_wb:,} tokens after "
                f"the last usage where Claude Code counts {d_cc}"
                + (" (it counts bookkeeping records as context)" if d_wb - d_cc > 1_000 else "")
            ]
        elif d_wb == d_cc and 0 < ours - (hi + d_cc) <= 32:
            parts = [
                f"the workbench's threshold ({ours:,}) is {ours - hi - d_cc} above the count "
                f"Claude Code records when it fires ({hi + d_cc:,}): its check counts "
                "tokens its preTokens does not"
            ]
    out.reason = "; ".join(parts)
    return out


def _base_trailing(release: Release) -> int | None:
    base = firing(release, next(c for c in _cases() if c.name == BASE_CASE))
    pre = (base.transcript.get("compactions") or [{}])[-1].get("pre_tokens")
    hi = base.search.get("first_firing_usage")
    return pre - hi if pre and hi else None


def _expected_confirm(search: dict[str, Any]) -> list[str] | None:
    if search["first_call_compacted"]:
        return None
    if search["first_firing_usage"] is None:
        return ["none", "none"]
    return ["none", search["outcome"]]


def _verb(kind: str | None) -> str:
    return {"compact": "compaction", "stop": "block"}.get(kind or "", "nothing")


def _verb3(kind: str | None) -> str:
    return {"compact": "compacts", "stop": "blocks"}.get(kind or "", "does nothing")


def _n(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


# --- transcripts ----------------------------------------------------------------------------

BASE_CASE = "sonnet-4-6"
BASE_MODEL = "claude-sonnet-4-6"
TRANSCRIPT_CASES = ("sonnet-4-6", "opus-5-5", "sonnet-4-5", "disable-auto", "window-150k")


def _transcript_cases() -> list[Case]:
    by_name = {c.name: c for c in _cases()}
    return [
        Case(name, f"transcript of the {by_name[name].title} run", by_name[name].data)
        for name in TRANSCRIPT_CASES
    ]


def run_transcripts(release: Release, case: Case) -> Outcome:
    source = next(c for c in _cases() if c.name == case.name)
    f = firing(release, source)
    out = Outcome(
        "transcripts", case.name, release.version, AGREE, rule="record-kinds-prompt-snapshot"
    )
    out.inputs = {"model": case.data["model"], "env": case.data["env"]}
    out.seconds = 0.0
    if f.error or f.gauge is None or f.replay is None or f.sessions is None:
        out.verdict, out.reason = ERROR, f.error or "no workbench reading"
        return out
    rec = f.transcript
    boundaries = rec["compactions"]
    totals = rec["usage_totals"]
    d_cc = None
    if boundaries and f.search.get("first_firing_usage") and boundaries[-1]["pre_tokens"]:
        d_cc = boundaries[-1]["pre_tokens"] - f.search["first_firing_usage"]
    d_wb = trailing_estimate(f.replay) or 0
    if d_cc is None and case.name != BASE_CASE:
        # No compaction recorded a count here: the same tool exchange costs what it cost in
        # the base case on this release (the workbench's own estimate would hide a false peak).
        d_cc = _base_trailing(release)
    true_max = max(
        [*(b["pre_tokens"] or 0 for b in boundaries), *(t + (d_cc or d_wb) for t in totals[:-1])]
        or [0]
    )
    session = f.sessions[0] if f.sessions else {}
    out.observed = {
        "compactions": boundaries,
        "largest_count": true_max,
        "models": rec["models"],
        "record_types": rec["record_types"],
        "attachment_types": rec["attachment_types"],
    }
    out.workbench = {
        "transcripts": {
            "sessions": len(f.sessions),
            "compactions": session.get("compactions"),
            "model": session.get("model"),
        },
        "gauge": {
            "compactions": [
                {"trigger": c.get("trigger"), "pre_tokens": c.get("pre_tokens")}
                for c in f.gauge.get("compactions") or []
            ]
        },
        "replay": {
            "peak": f.replay.get("peak"),
            "compactions": [
                {
                    "recorded": c.get("recorded_pre_tokens"),
                    "estimated": c.get("estimated_pre_tokens"),
                }
                for c in f.replay.get("compactions") or []
            ],
        },
    }
    problems = []
    if len(f.sessions) != 1:
        problems.append(f"transcripts lists {len(f.sessions)} sessions, Claude Code wrote 1")
    if session.get("compactions") != len(boundaries):
        problems.append(
            f"transcripts counts {session.get('compactions')} compactions, the file has "
            f"{len(boundaries)}"
        )
    if rec["models"] and session.get("model") not in rec["models"]:
        problems.append(f"transcripts says model {session.get('model')}, recorded {rec['models']}")
    gauge_pre = [c.get("pre_tokens") for c in f.gauge.get("compactions") or []]
    if gauge_pre != [b["pre_tokens"] for b in boundaries]:
        problems.append(
            f"gauge reads compactions {gauge_pre}, recorded {[b['pre_tokens'] for b in boundaries]}"
        )
    peak = f.replay.get("peak") or 0
    if peak > true_max + PEAK_TOLERANCE:
        problems.append(
            f"false peak: replay peaks at {peak:,}, Claude Code's largest count was {true_max:,}"
        )
    for c in f.replay.get("compactions") or []:
        rec_pre, est = c.get("recorded_pre_tokens"), c.get("estimated_pre_tokens")
        # The transcript lacks reminders Claude Code counted in memory: a few hundred tokens.
        slack = max(0.02 * rec_pre, 300) if isinstance(rec_pre, int) else 0
        if isinstance(rec_pre, int) and isinstance(est, int) and abs(est - rec_pre) > slack:
            problems.append(f"replay estimates a compaction at {est:,}, recorded {rec_pre:,}")
    if problems:
        out.verdict, out.reason = DIFFER, "; ".join(problems)
    return out


def recording(release: Release, case: Case) -> dict[str, Any] | None:
    """What tests/data keeps of one case: the observation and the sanitised transcript."""
    key = (release.version, case.name)
    f = _memo.get(key)
    if f is None or f.error:
        return None
    return {
        "release": release.version,
        "case": case.name,
        "model": case.data["model"],
        "env": case.data["env"],
        "search": f.search,
        "confirm": f.confirm,
        "recorded": f.transcript,
        "transcript": f.recording,
    }


CHECK_AUTOCOMPACT = Check(
    "autocompact", "the auto-compact firing point", _cases, run_autocompact, weight=8.0
)
CHECK_TRANSCRIPTS = Check(
    "transcripts", "transcripts read back", _transcript_cases, run_transcripts, weight=8.0
)
