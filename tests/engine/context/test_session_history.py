"""The project's sessions over time: summaries from the attribution pass, cached by size and
modification time, recomputed only where something changed."""

from __future__ import annotations

import json
import os
from pathlib import Path

from workbench.devtools.synth import SessionBuilder
from workbench.engine import Engine
from workbench.engine.claude_paths import project_root_for, sanitize_path
from workbench.engine.context.session_history import CACHE_FORMAT, cache_file
from workbench.engine.context.spend import SpendTally


def project(tmp_path: Path) -> tuple[Engine, Path]:
    root = tmp_path / "proj"
    root.mkdir(exist_ok=True)
    config = tmp_path / "claude"
    env = {"HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(config)}
    env["WORKBENCH_CLAUDE_COMMAND"] = ""
    folder = config / "projects" / sanitize_path(project_root_for(root))
    return Engine.open(root, env=env), folder


def session(folder: Path, number: int, *, reads: int, compact: str | None = None) -> Path:
    b = SessionBuilder(seed=number, session_id=f"{number:08d}-0000-4000-8000-000000000000")
    b.prompt(f"Task {number}")
    for k in range(reads):
        b.tool_call("Read", {"file_path": f"/p/f{k}.py"}, "line of code\n" * 1_500)
    if compact:
        b.compact("Summary.", trigger=compact)
        b.user(
            [{"type": "text", "text": "<command-name>/compact</command-name>"}]
            if compact == "manual"
            else "continue"
        )
        b.tool_call("Bash", {"command": "make"}, "ok\n" * 10)
    b.reply("Done.")
    return b.write(folder / f"{b.session_id}.jsonl")


def test_sessions_summarise_peaks_compactions_and_thresholds(tmp_path):
    engine, folder = project(tmp_path)
    session(folder, 1, reads=3)
    session(folder, 2, reads=40, compact="auto")
    session(folder, 3, reads=2, compact="manual")
    history = engine.context.session_history()
    by_id = {s.session_id[:8]: s for s in history.sessions}
    big = by_id["00000002"]
    assert big.peak > big.thresholds["warning"] and big.peak_call is not None
    assert big.first_crossings["warning"] is not None
    assert big.first_crossings["warning"] <= (big.first_crossings["autocompact"] or 10**9)
    assert big.compactions == {"auto": 1, "manual": 0, "reactive": 0}
    assert by_id["00000003"].compactions["manual"] == 1
    assert by_id["00000001"].compactions == {"auto": 0, "manual": 0, "reactive": 0}
    assert big.tokens_in == sum(c.recorded for c in engine.context.attribution(big.path).calls)
    assert history.totals()["sessions"] == 3 and history.totals()["auto"] == 1
    assert [s.title for s in history.sessions] == ["Task 1", "Task 2", "Task 3"]


def test_a_second_look_reads_only_what_changed(tmp_path):
    engine, folder = project(tmp_path)
    paths = [session(folder, n, reads=3) for n in range(1, 6)]
    first = engine.context.session_history()
    assert (first.read, first.cached) == (5, 0)
    again = project(tmp_path)[0].context.session_history()
    assert (again.read, again.cached) == (0, 5)
    assert [s.to_json() for s in again.sessions] == [s.to_json() for s in first.sessions]
    with paths[2].open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"type": "custom-title", "customTitle": "x"}) + "\n")
    later = project(tmp_path)[0].context.session_history()
    assert (later.read, later.cached) == (1, 4)
    # Other rules in force (another release) mean other thresholds: recomputed.
    env = dict(engine.env, CLAUDE_CODE_AUTO_COMPACT_WINDOW="120000")
    other = Engine.open(tmp_path / "proj", env=env).context.session_history()
    assert other.read == 5
    assert cache_file(engine.context).is_file()


def test_a_broken_cache_is_ignored_and_rewritten(tmp_path):
    engine, folder = project(tmp_path)
    session(folder, 1, reads=2)
    store = cache_file(engine.context)
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_text("{not json", encoding="utf-8")
    history = engine.context.session_history()
    assert history.read == 1 and not history.problems
    assert json.loads(store.read_text(encoding="utf-8"))["format"] == CACHE_FORMAT
    assert os.path.getsize(store) > 0


def _usage_in(record: dict) -> int:
    usage = record["message"]["usage"]
    return sum(
        usage[k] for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )


def test_spend_counts_sidechains_subagent_files_and_agent_progress_each_call_once(tmp_path):
    # Spec 04 appendix §7 and §8 rule 4: the context curve is the main chain's, the spend is
    # every call paid for, each response once by (message.id, requestId).
    engine, folder = project(tmp_path)
    b = SessionBuilder(seed=7, session_id="00000007-0000-4000-8000-000000000000")
    b.prompt("Ask a subagent")
    main_calls = [b.assistant([{"type": "text", "text": "Delegating."}])[-1]]
    # A v2.0 Task written inline: a sidechain turn, and a replay of the parent's response.
    b.sidechain = True
    b.user("How are you doing?")
    inline = b.assistant([{"type": "text", "text": "Fine."}], usage=_usage(4, 12_405, 0, 117))
    replay = dict(main_calls[0], uuid=b.new_uuid(), requestId="req_replay", isSidechain=True)
    b.entries.append(replay)
    b.sidechain = False
    # A v2.1 subagent: its calls in its own file, and copied into agent_progress lines.
    agent = SessionBuilder(seed=8, session_id=b.session_id)
    agent.sidechain = True
    agent.user("Summarise the code")
    in_file = agent.assistant([{"type": "text", "text": "ok"}], usage=_usage(3, 8_681, 164_830, 8))
    agent.write(folder / b.session_id / "subagents" / "agent-a1.jsonl")
    progress_only = SessionBuilder(seed=9).assistant(
        [{"type": "text", "text": "x"}], usage=_usage(7, 854, 25_085, 1)
    )
    for copied in (in_file[-1], in_file[-1], progress_only[-1]):
        b.entries.append(
            {
                "type": "progress",
                "data": {"type": "agent_progress", "agentId": "a1", "message": copied},
                "uuid": b.new_uuid(),
                "parentUuid": b.parent,
            }
        )
    main_calls.append(b.reply("Done.")[-1])
    path = b.write(folder / f"{b.session_id}.jsonl")

    summary = engine.context.session_history().sessions[0]
    report = engine.context.attribution(path)
    main_in = sum(_usage_in(r) for r in main_calls)
    assert sum(c.recorded for c in report.calls) == main_in  # the curve stays main-only
    assert summary.calls == 2 and summary.peak == max(c.recorded + c.output for c in report.calls)
    expected = main_in + 12_409 + 173_514 + 25_946
    assert summary.tokens_in == expected
    assert (
        summary.tokens_out
        == sum(r["message"]["usage"]["output_tokens"] for r in (*main_calls, inline[-1])) + 8 + 1
    )
    assert summary.spend_calls == {"main": 2, "sidechain": 1, "subagents": 1, "agent_progress": 1}
    assert engine.context.session_history().totals()["tokens_in"] == expected

    # A subagent file that grows is read again, though the transcript did not change.
    more = SessionBuilder(seed=10, session_id=b.session_id)
    more.sidechain = True
    more.assistant([{"type": "text", "text": "more"}], usage=_usage(1, 0, 0, 1))
    more.write(folder / b.session_id / "subagents" / "agent-a2.jsonl")
    again = project(tmp_path)[0].context.session_history()
    assert again.read == 1 and again.sessions[0].tokens_in == expected + 1


def _usage(fresh: int, created: int, read: int, out: int) -> dict:
    return {
        "input_tokens": fresh,
        "cache_creation_input_tokens": created,
        "cache_read_input_tokens": read,
        "output_tokens": out,
    }


def test_a_sidechain_copy_of_a_main_response_is_not_counted_twice():
    tally = SpendTally()
    record = {
        "type": "assistant",
        "requestId": "r1",
        "message": {"id": "m1", "usage": _usage(1, 2, 3, 4)},
    }
    tally.add(record, "main")
    tally.add({**record, "requestId": "r2"}, "sidechain")  # a /btw replay
    tally.add({**record, "message": {"id": "m1", "usage": _usage(1, 2, 3, 9)}}, "main")
    spend = tally.finish()
    assert (spend.calls, spend.tokens_in, spend.tokens_out) == (1, 6, 9)


def test_final_is_what_the_gauge_counts_after_a_compaction(tmp_path):
    # `sessions` said the context was 15,808 (the last call, before /compact) where the
    # gauge said 652 (the messages after the boundary): both now give the gauge's count.
    engine, folder = project(tmp_path)
    path = session(folder, 3, reads=2, compact="manual")
    b = SessionBuilder(seed=11, session_id="00000011-0000-4000-8000-000000000000")
    b.prompt("Short task")
    b.tool_call("Read", {"file_path": "/p/a.py"}, "x\n" * 300)
    b.reply("Done.")
    b.compact("Summary.", trigger="manual")
    b.user([{"type": "text", "text": "<command-name>/compact</command-name>"}])
    compacted = b.write(folder / f"{b.session_id}.jsonl")
    by_path = {s.path: s for s in engine.context.session_history().sessions}
    for target in (path, compacted):
        gauge = engine.context.gauge(str(target))
        summary = by_path[str(target)]
        assert (summary.final, summary.final_method) == (gauge.used, gauge.used_method)
    last = engine.context.attribution(compacted).calls[-1]
    assert by_path[str(compacted)].final < last.recorded  # the pre-compaction figure is gone
    assert by_path[str(compacted)].final_method == "estimate"
