"""The shared session model (`engine.context.session`): one streamed read per transcript that
gives exactly what a whole-file load gives, held once and let go when another is chosen."""

from __future__ import annotations

import gc
import json
import weakref
from pathlib import Path

import pytest

from workbench.devtools.synth import SessionBuilder
from workbench.engine import Engine
from workbench.engine.context.session_memory import evaluate_trigger
from workbench.engine.context.session_model import _Window, read_session_model
from workbench.engine.context.transcript import Transcript
from workbench.engine.userfiles import TRANSCRIPT_LINE_LIMIT

ORACLE_TRANSCRIPTS = Path(__file__).resolve().parents[2] / "data" / "oracle" / "transcripts"


def _assert_same_as_whole_file(path: Path) -> None:
    whole = Transcript.load(path)
    model = read_session_model(path)
    expected = whole.current_messages()
    assert [(e.line, e.offset, e.raw) for e in model.current] == [
        (e.line, e.offset, e.raw) for e in expected
    ]
    assert model.model == whole.model
    assert model.message_count == len(whole.messages)
    assert model.trigger == evaluate_trigger(whole.messages)


def _working_session(b: SessionBuilder, turns: int) -> None:
    for turn in range(turns):
        b.prompt(f"step {turn}")
        b.tool_call("Read", {"file_path": f"/src/m{turn}.py"}, "x = 1\n" * 400)
        b.progress()
        b.reply(f"done {turn} " * 300)


def _preserved_compaction(b: SessionBuilder) -> None:
    b.prompt("keep me")
    head = b.entries[-1]["uuid"]
    kept = b.reply("kept reply " * 50)
    boundary, summary = b.compact("Notes as summary.", pre_tokens=90_000)
    boundary["compactMetadata"]["preservedSegment"] = {
        "headUuid": head,
        "anchorUuid": summary["uuid"],
        "tailUuid": kept[-1]["uuid"],
    }


def test_streamed_model_matches_the_whole_file_on_recorded_transcripts():
    paths = sorted(ORACLE_TRANSCRIPTS.rglob("*.jsonl"))
    assert paths
    for path in paths:
        _assert_same_as_whole_file(path)


def test_streamed_model_matches_through_compactions_preserved_segments_and_junk(tmp_path):
    b = SessionBuilder(seed=3)
    _working_session(b, 6)
    b.compact("First summary.")
    _working_session(b, 4)
    _preserved_compaction(b)
    _working_session(b, 3)
    b.entries.insert(5, dict(b.entries[3]))  # a resume copies an earlier line
    path = b.write(tmp_path / "s.jsonl")
    runaway = b'{"type":"user","x":"' + b"y" * (TRANSCRIPT_LINE_LIMIT + 10) + b'"}\n'
    with path.open("ab") as handle:
        handle.write(b"\n   \nnot json\n" + runaway + b'{"type":"user","message":{"ro')
    _assert_same_as_whole_file(path)
    model = read_session_model(path)
    assert model.current[0].is_compact_boundary
    assert model.trigger.points


@pytest.mark.parametrize("where", ["previous segment", "before the window"])
def test_a_preserved_chain_the_window_cannot_follow_falls_back_to_the_whole_file(tmp_path, where):
    b = SessionBuilder(seed=5)
    b.prompt("keep me")
    head = b.entries[-1]["uuid"]
    kept = b.reply("kept reply " * 50)
    if where == "before the window":
        b.compact("An older summary.")  # the preserved messages are now two segments back
        _working_session(b, 1)
    boundary, summary = b.compact("Notes as summary.", pre_tokens=90_000)
    boundary["compactMetadata"]["preservedSegment"] = {
        "headUuid": head,
        "anchorUuid": summary["uuid"],
        "tailUuid": kept[-1]["uuid"],
    }
    b.prompt("after")
    path = b.write(tmp_path / "s.jsonl")
    whole = Transcript.load(path)
    assert whole.preserved is not None and whole.preserved.status == "live"
    _assert_same_as_whole_file(path)


def test_a_subagent_file_uses_its_own_chain(tmp_path):
    b = SessionBuilder(seed=4)
    _working_session(b, 3)
    for entry in b.entries:
        if "isSidechain" in entry:
            entry["isSidechain"] = True
    _assert_same_as_whole_file(b.write(tmp_path / "agent-1.jsonl"))


def test_the_window_keeps_only_the_last_two_segments():
    b = SessionBuilder(seed=6)
    for _ in range(5):
        _working_session(b, 3)
        b.compact("Summary.")
    _working_session(b, 2)
    window = _Window()
    for entry in Transcript.from_dicts(b.entries).entries:
        window.add(entry)
    boundaries = [e for e in window.previous + window.segment if e.is_compact_boundary]
    assert len(boundaries) == 2
    assert window.count > len(window.previous) + len(window.segment)


def _project(tmp_path: Path) -> tuple[Engine, Path, Path]:
    engine = Engine.open(tmp_path / "proj", env={"HOME": str(tmp_path / "home")})
    folder = Path(engine.locations.transcripts_dir)
    first, second = SessionBuilder(seed=1), SessionBuilder(seed=2)
    _working_session(first, 3)
    _working_session(second, 2)
    return engine, first.write(folder / "a.jsonl"), second.write(folder / "b.jsonl")


def test_one_model_is_shared_reread_when_the_file_grows_and_released(tmp_path):
    engine, a, b = _project(tmp_path)
    context = engine.context
    model = context.session(a)
    assert context.session(str(a)) is model
    ref = weakref.ref(model)
    del model
    context.session(b)  # choosing another session lets the first go
    gc.collect()
    assert ref() is None
    before = context.session(b)
    with b.open("a") as handle:
        handle.write(json.dumps({"type": "user", "uuid": "late", "message": {"content": "hi"}}))
        handle.write("\n")
    grown = context.session(b)
    assert grown is not before and grown.message_count == before.message_count + 1
    ref = weakref.ref(grown)
    del grown, before
    context.release_session(b)
    gc.collect()
    assert ref() is None


def test_measure_preview_and_notes_agree_with_the_whole_file(tmp_path):
    engine, a, _ = _project(tmp_path)
    context = engine.context
    whole = Transcript.load(a)
    counts = context.measure(a, tiktoken=False)
    assert counts.messages == len(whole.current_messages())
    notes = context.session_memory(trigger=str(a))
    assert notes.trigger == evaluate_trigger(whole.messages)
