"""Dream: the four-phase prompt, the gates, the lock around a run, and its rollback."""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path

import pytest
from fakes.messages_api import FakeMessagesAPI

from workbench.engine import Engine
from workbench.engine.agents.dream import (
    DreamAgent,
    DreamSettings,
    SessionScanThrottle,
    consolidation_prompt,
    dream_extra,
)
from workbench.engine.agents.dream_lock import ConsolidationLock
from workbench.engine.agents.review_queue import ReviewQueue
from workbench.engine.errors import ActionRequired
from workbench.engine.llm import LLMOverloadedError, LLMServerError

DAY_MS = 86_400_000


def add_sessions(engine: Engine, count: int, *, age_days: float = 0) -> list[str]:
    ids = []
    folder = Path(engine.locations.transcripts_dir)
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.time() - age_days * 86_400
    for _ in range(count):
        sid = str(uuid.uuid4())
        path = folder / f"{sid}.jsonl"
        path.write_text(json.dumps({"type": "user", "uuid": "u"}) + "\n")
        os.utime(path, (stamp, stamp))
        ids.append(sid)
    return ids


def lock_for(engine: Engine) -> Path:
    return Path(engine.locations.consolidate_lock)


def test_prompt_has_four_phases_and_the_extra_block() -> None:
    text = consolidation_prompt("/m/", "/t", dream_extra(["s1", "s2"]))
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings == [
        "## Phase 1: Orient",
        "## Phase 2: Gather recent signal",
        "## Phase 3: Consolidate",
        "## Phase 4: Prune and index",
        "## Additional context",
    ]
    assert 'grep -rn "<narrow term>" /t/ --include="*.jsonl" | tail -50' in text
    assert "200 lines" in text and "25 KB" in text and "150 characters" in text
    assert "Sessions since the last consolidation (2):\n- s1\n- s2" in text
    assert "## Additional context" not in consolidation_prompt("/m/", "/t")


def test_gates_count_sessions_since_the_lock_mtime(agent_engine: Engine) -> None:
    add_sessions(agent_engine, 3, age_days=3)
    recent = add_sessions(agent_engine, 2, age_days=0.5)
    Path(agent_engine.locations.transcripts_dir, "not-a-uuid.jsonl").write_text("{}\n")
    lock = ConsolidationLock(lock_for(agent_engine))
    lock.record_consolidation()
    stamp = time.time() - 2 * 86_400
    os.utime(lock_for(agent_engine), (stamp, stamp))
    settings = DreamSettings(setting_enabled=True, min_hours=24, min_sessions=2)
    gates = DreamAgent(agent_engine, settings, lock).gates(current_session=None)
    assert set(gates.sessions) == set(recent)
    assert gates.time_ok and gates.sessions_ok and gates.would_fire
    # The current session is never counted.
    gates = DreamAgent(agent_engine, settings, lock).gates(current_session=recent[0])
    assert not gates.sessions_ok and "1 of 2 sessions" in " ".join(gates.reasons())


def test_time_gate_and_disabled_dream(agent_engine: Engine) -> None:
    add_sessions(agent_engine, 6)
    ConsolidationLock(lock_for(agent_engine)).record_consolidation()
    gates = DreamAgent(agent_engine, DreamSettings(setting_enabled=False)).gates()
    assert not gates.time_ok and not gates.would_fire
    reasons = " ".join(gates.reasons())
    assert "automatic dream is off" in reasons and "h since the last consolidation" in reasons


def test_setting_wins_over_the_flag(agent_engine: Engine) -> None:
    config = Path(agent_engine.locations.config_home)
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.json").write_text('{"autoDreamEnabled": false}')
    engine = Engine(
        agent_engine.locations, env={**agent_engine.env, "WORKBENCH_DREAM_ENABLED": "1"}
    )
    assert not DreamSettings.from_engine(engine).enabled
    (config / "settings.json").write_text("{}")
    assert DreamSettings.from_engine(engine).enabled


def test_scan_throttle() -> None:
    throttle = SessionScanThrottle()
    assert throttle.allow(0)
    assert not throttle.allow(9 * 60_000)
    assert throttle.allow(10 * 60_000)


def test_dry_run_sends_nothing_and_leaves_the_lock(
    llm_engine: Engine, fake_messages_api: FakeMessagesAPI
) -> None:
    result = DreamAgent(llm_engine, DreamSettings()).dry_run()
    assert result.status == "dry_run"
    assert fake_messages_api.requests == []
    assert not lock_for(llm_engine).exists()
    assert result.request["messages"][0]["content"].startswith("# Dream: memory consolidation")
    assert [t["name"] for t in result.request["tools"]] == [
        "Read",
        "Grep",
        "Glob",
        "Bash",
        "Edit",
        "Write",
    ]


async def test_a_run_queues_changes_and_keeps_the_lock_at_now(
    llm_engine: Engine, fake_messages_api: FakeMessagesAPI, snapshot_tree
) -> None:
    memory = Path(llm_engine.locations.memory_dir)
    before = snapshot_tree(memory)
    fake_messages_api.reply_tool_use([("Bash", {"command": f"ls {memory}"})])
    fake_messages_api.reply_tool_use(
        [
            (
                "Edit",
                {
                    "file_path": str(memory / "feedback_testing.md"),
                    "old_string": "Run pytest -q before committing.",
                    "new_string": "Run pytest -q before every commit (since 2026-03-01).",
                },
            )
        ]
    )
    fake_messages_api.reply_text("Tightened one memory.")
    started_ms = time.time() * 1000
    result = await DreamAgent(llm_engine, DreamSettings()).run(mode="propose")
    ended_ms = time.time() * 1000
    data = result.to_json()
    assert data["summary"] == "● Improved 1 memory"
    assert "feedback_testing.md" in data["tool_calls"][0]["content"]  # the real ls ran
    after = snapshot_tree(memory)
    assert {k: v for k, v in after.items() if not k.endswith(".consolidate-lock")} == before
    assert [p.path for p in ReviewQueue(llm_engine).list()] == ["feedback_testing.md"]
    # Stamped during the run (a bound, whatever the machine's speed; 1 s for mtime rounding).
    stamped = ConsolidationLock(lock_for(llm_engine)).last_consolidated_ms()
    assert started_ms - 1000 <= stamped <= ended_ms + 1000
    assert not result.lock_rolled_back


async def test_apply_writes_and_show_mode_rolls_the_lock_back(
    llm_engine: Engine, fake_messages_api: FakeMessagesAPI
) -> None:
    memory = Path(llm_engine.locations.memory_dir)
    lock = lock_for(llm_engine)
    lock.write_text("")
    earlier = time.time() - 5 * 86_400
    os.utime(lock, (earlier, earlier))
    fake_messages_api.reply_tool_use(
        [("Write", {"file_path": str(memory / "project_freeze.md"), "content": "freeze\n"})]
    )
    fake_messages_api.reply_text("ok")
    shown = await DreamAgent(llm_engine, DreamSettings()).run(mode="show")
    assert shown.changes[0].outcome == "shown" and "+freeze" in shown.changes[0].diff
    assert not (memory / "project_freeze.md").exists()
    assert shown.lock_rolled_back
    assert lock.stat().st_mtime == pytest.approx(earlier, abs=1)

    fake_messages_api.reply_tool_use(
        [("Write", {"file_path": str(memory / "project_freeze.md"), "content": "freeze\n"})]
    )
    fake_messages_api.reply_text("ok")
    applied = await DreamAgent(llm_engine, DreamSettings()).run(mode="apply")
    assert (memory / "project_freeze.md").read_text() == "freeze\n"
    assert applied.changes[0].outcome == "applied"
    assert lock.stat().st_mtime > earlier + 86_400


async def test_a_failed_run_rolls_the_lock_back(
    llm_engine: Engine, fake_messages_api: FakeMessagesAPI
) -> None:
    lock = lock_for(llm_engine)
    fake_messages_api.reply_error(500, "api_error", "boom")
    with pytest.raises(LLMServerError):
        await DreamAgent(llm_engine, DreamSettings()).run(mode="propose")
    assert not lock.exists()  # there was no lock before, so it is removed

    lock.write_text("")
    earlier = time.time() - 3 * 86_400
    os.utime(lock, (earlier, earlier))
    fake_messages_api.reply_error(529, "overloaded_error", "busy")
    with pytest.raises(LLMOverloadedError):
        await DreamAgent(llm_engine, DreamSettings()).run(mode="propose")
    assert lock.read_text() == ""
    assert lock.stat().st_mtime == pytest.approx(earlier, abs=1)


async def test_a_held_lock_blocks_a_second_dream(
    llm_engine: Engine, fake_messages_api: FakeMessagesAPI
) -> None:
    lock = lock_for(llm_engine)
    lock.write_text(str(os.getppid()))  # a live process that is not us
    with pytest.raises(ActionRequired) as caught:
        await DreamAgent(llm_engine, DreamSettings()).run(mode="propose")
    assert str(os.getppid()) in str(caught.value)
    assert fake_messages_api.requests == []
    assert lock.read_text() == str(os.getppid())
