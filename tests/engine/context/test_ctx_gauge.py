"""The gauge read from the end, the follower, and the replay against recorded compactions."""

from __future__ import annotations

import json
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.devtools.synth import SessionBuilder
from workbench.engine.context.follow import TranscriptFollower
from workbench.engine.context.gauge import read_gauge_tail
from workbench.engine.context.replay import replay_transcript
from workbench.engine.context.thresholds import compute_thresholds
from workbench.engine.context.tokens import token_count_with_estimation
from workbench.engine.context.transcript import Transcript
from workbench.engine.profiles import profile_for

LEGACY = profile_for("2.1.88")
"""Windows under 100,000 are only possible with 2.1.88's reading of the window override."""


def ladder(model: str | None):
    return compute_thresholds(model or "claude-sonnet-4-6", env={})


def _session(seed: int = 1, turns: int = 30, compact_at: int | None = None) -> SessionBuilder:
    b = SessionBuilder(seed=seed)
    b.prompt("Speed up the nightly export")
    for i in range(turns):
        if compact_at is not None and i == compact_at:
            b.compact("Summary: export work so far.")
            b.prompt("carry on")
        b.tool_call("Read", {"file_path": f"/repo/export/part_{i}.py"}, "row\n" * 600)
        b.tool_call("Bash", {"command": f"pytest -k part_{i}"}, "1 passed")
        b.reply(f"Part {i} done.", thinking="next part")
    return b


# --- the tail read agrees with the full read ------------------------------------------------


@pytest.mark.parametrize("compact_at", [None, 10, 29])
def test_tail_count_equals_full_count(tmp_path, compact_at):
    b = _session(compact_at=compact_at)
    b.user("one more thing " * 40)  # messages after the last usage are estimated
    path = b.write(tmp_path / "s.jsonl")
    tail = read_gauge_tail(path)
    full = Transcript.load(path)
    assert token_count_with_estimation(tail.messages) == full.context_tokens()
    assert tail.bytes_read < path.stat().st_size / 4
    assert [c.pre_tokens for c in tail.compactions] == [c.pre_tokens for c in full.compactions]
    assert tail.model == "claude-sonnet-4-6"


def test_tail_after_a_fresh_boundary_has_no_usage(tmp_path):
    b = _session(turns=5)
    b.compact("Summary.")
    path = b.write(tmp_path / "s.jsonl")
    tail = read_gauge_tail(path)
    assert tail.messages[0].is_compact_boundary
    assert tail.model == "claude-sonnet-4-6"  # found further back
    assert token_count_with_estimation(tail.messages) == Transcript.load(path).context_tokens()


def test_tail_with_a_live_preserved_segment_reads_everything(tmp_path):
    b = _session(turns=3)
    head = b.entries[-2]["uuid"]
    tail_uuid = b.entries[-1]["uuid"]
    boundary, summary = b.compact("Notes.")
    boundary["compactMetadata"]["preservedSegment"] = {
        "headUuid": head,
        "anchorUuid": summary["uuid"],
        "tailUuid": tail_uuid,
    }
    path = b.write(tmp_path / "s.jsonl")
    tail = read_gauge_tail(path)
    assert tail.mode == "full"
    assert token_count_with_estimation(tail.messages) == Transcript.load(path).context_tokens()


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\n\n\n",
        b"garbage\x00\xff\n" * 10,
        b'{"type":"user","message":{"content":"half',
    ],
)
def test_tail_bad_input(tmp_path, data):
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    tail = read_gauge_tail(path)
    assert token_count_with_estimation(tail.messages) == 0
    assert tail.model is None


def test_tail_reports_a_half_written_last_line(tmp_path):
    data = _session(turns=3).to_bytes() + b'{"type":"assistant","mess'
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    tail = read_gauge_tail(path)
    assert tail.truncated_tail and tail.broken_lines == 0
    assert tail.end_offset == len(data) - len(b'{"type":"assistant","mess')


# --- the follower ---------------------------------------------------------------------------


def test_follower_matches_a_full_read_after_every_append(tmp_path):
    b = _session(turns=2)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b.to_bytes())
    follower = TranscriptFollower(path, ladder)
    assert follower.report.used == Transcript.load(path).context_tokens()
    more = _session(seed=1, turns=8)  # same seed: the first entries are identical
    extra = more.entries[len(b.entries) :]
    extra_lines = [json.dumps(e, separators=(",", ":")) + "\n" for e in extra]
    # Append in awkward pieces: half a line, then the rest plus more lines.
    blob = "".join(extra_lines).encode()
    cut_points = [37, 500, 2_000, len(blob)]
    start = 0
    with open(path, "ab") as handle:
        for cut in cut_points:
            handle.write(blob[start:cut])
            handle.flush()
            start = cut
            update = follower.poll()
            assert update.report.used == Transcript.load(path).context_tokens()
    assert follower.offset == path.stat().st_size


def test_follower_sees_a_compaction_and_a_truncated_file(tmp_path):
    b = _session(turns=3)
    path = b.write(tmp_path / "s.jsonl")
    follower = TranscriptFollower(path, ladder)
    before = follower.report.used
    b.compact("Summary.")
    path.write_bytes(b.to_bytes())
    update = follower.poll()
    assert update.changed and len(update.report.compactions) == 1
    assert update.report.used < before
    path.write_bytes(b"")  # replaced by an empty file
    update = follower.poll()
    assert update.reset and update.report.used == 0


def test_follower_watch_yields_on_append(tmp_path):
    path = _session(turns=2).write(tmp_path / "s.jsonl")
    follower = TranscriptFollower(path, ladder)
    stop = threading.Event()
    readings = []

    def writer() -> None:
        time.sleep(0.3)
        with open(path, "ab") as handle:
            handle.write(
                json.dumps(
                    {
                        "type": "user",
                        "uuid": "x1",
                        "message": {"role": "user", "content": "y" * 4000},
                    }
                ).encode()
                + b"\n"
            )

    thread = threading.Thread(target=writer)
    thread.start()
    deadline = time.monotonic() + 10
    for report in follower.watch(stop=lambda: stop.is_set() or time.monotonic() > deadline):
        readings.append(report.used)
        if len(readings) == 2:
            stop.set()
            break
    thread.join()
    assert len(readings) == 2 and readings[1] == readings[0] + 1000


# --- replay ---------------------------------------------------------------------------------


def test_replay_turns_and_an_unrecorded_fire():
    b = _session(turns=60)
    t = Transcript.from_dicts(b.entries)
    small = lambda m: compute_thresholds(  # noqa: E731
        m or "x", env={"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "60000"}, profile=LEGACY
    )
    report = replay_transcript(t, thresholds_for=small, default_model="claude-sonnet-4-6")
    assert len(report.turns) == len(t.responses())
    assert report.unrecorded_fires
    fire = report.unrecorded_fires[0]
    assert report.turns[fire.turn].estimated_before >= 27_000
    assert all(not x.above_autocompact for x in report.turns[: fire.turn])
    json.dumps(report.to_json())


def test_replay_judges_a_recorded_auto_compaction():
    b = _session(turns=20)
    pre = Transcript.from_dicts(b.entries).context_tokens()
    b.compact("Summary.", pre_tokens=pre)
    b.prompt("go on")
    b.reply("ok")
    t = Transcript.from_dicts(b.entries)
    at = compute_thresholds(
        "m", env={"CLAUDE_CODE_AUTO_COMPACT_WINDOW": str(pre + 32_999)}, profile=LEGACY
    )
    assert at.autocompact == pre - 1
    report = replay_transcript(t, thresholds_for=lambda m: at, default_model="m")
    [judged] = report.compactions
    assert judged.estimated_pre_tokens == pre and judged.difference == 0
    assert judged.agrees is True
    late = compute_thresholds(
        "m", env={"CLAUDE_CODE_AUTO_COMPACT_WINDOW": str(pre + 40_000)}, profile=LEGACY
    )
    report = replay_transcript(t, thresholds_for=lambda m: late, default_model="m")
    assert report.compactions[0].agrees is False
    assert "below the threshold" in report.compactions[0].note


def test_replay_agrees_with_the_spotter_auto_compaction(shared_transcripts):
    path = next((shared_transcripts / "spotter").glob("*.jsonl"))
    t = Transcript.load(path)
    report = replay_transcript(t, thresholds_for=ladder, default_model="claude-opus-4-6")
    [compaction] = report.compactions
    assert compaction.trigger == "auto" and compaction.recorded_pre_tokens == 170_251
    assert compaction.threshold == 167_000  # Opus 4.6: 200,000 − 20,000 − 13,000
    assert compaction.agrees is True
    # The replay fires at the recorded point and not one call earlier.
    assert compaction.first_predicted_turn is None
    last_before = max(x.estimated_before for x in report.turns if x.segment == 0)
    assert last_before < 167_000 <= compaction.estimated_pre_tokens
    assert abs(compaction.estimated_pre_tokens - 170_251) / 170_251 < 0.01
    assert len(report.turns) == 139 and report.turns[0].context_tokens == 26_450
    assert report.unrecorded_fires == ()


def test_replay_of_every_shared_transcript(shared_transcripts):
    for path in sorted(shared_transcripts.rglob("*.jsonl")):
        t = Transcript.load(path)
        report = replay_transcript(t, thresholds_for=ladder, default_model="claude-sonnet-4-6")
        assert report.final_tokens == t.context_tokens(), path


# --- the streaming replay and the quick session summary --------------------------------------


def test_replay_file_equals_the_in_memory_replay(tmp_path):
    b = _session(turns=25, compact_at=12)
    b.sidechain = True
    b.user("side " * 50)
    b.sidechain = False
    b.metadata("summary", summary="x", leafUuid="y")
    b.reply("end")
    path = b.write(tmp_path / "s.jsonl")
    from workbench.engine.context.replay import replay_file

    streamed = replay_file(path, thresholds_for=ladder, default_model="claude-sonnet-4-6")
    loaded = replay_transcript(
        Transcript.load(path), thresholds_for=ladder, default_model="claude-sonnet-4-6"
    )
    assert streamed.to_json() == loaded.to_json()


def test_replay_file_on_spotter_equals_the_in_memory_replay(shared_transcripts):
    from workbench.engine.context.replay import replay_file

    for path in sorted(shared_transcripts.rglob("*.jsonl")):
        streamed = replay_file(path, thresholds_for=ladder, default_model="claude-sonnet-4-6")
        loaded = replay_transcript(
            Transcript.load(path), thresholds_for=ladder, default_model="claude-sonnet-4-6"
        )
        assert streamed.to_json() == loaded.to_json(), path


def test_sniff_type_only_answers_when_sure():
    from workbench.engine.context.jsonl import sniff_type

    assert sniff_type(b'{"parentUuid":null,"type":"progress","data":{}}') == b"progress"
    assert sniff_type(b'{"type":"file-history-snapshot","snapshot":{}}') == b"file-history-snapshot"
    # The first "type" key is nested: unsure.
    assert sniff_type(b'{"message":{"type":"message"},"type":"assistant"}') is None
    assert sniff_type(b'{"a":[1],"type":"progress"}') is None
    # A quoted "type" inside a string is escaped, so it never matches.
    assert sniff_type(b'{"t":"x \\"type\\":\\"progress\\"","type":"user"}') == b"user"
    assert sniff_type(b"garbage") is None


def test_quick_session_info_matches_the_full_one(shared_transcripts, monkeypatch):
    import workbench.engine.context.session_list as session_list_module

    path = next((shared_transcripts / "spotter").glob("*.jsonl"))
    full = session_list_module.session_info(path).to_json()
    monkeypatch.setattr(session_list_module, "QUICK_INFO_BYTES", 0)
    quick = session_list_module.session_info(path).to_json()
    for key in ("messages", "title", "model", "context_tokens", "compactions", "last_timestamp"):
        assert quick[key] == full[key], key


def test_replay_treats_a_user_compact_command_as_manual():
    b = _session(turns=3)
    b.compact("Notes as summary.", trigger="auto", pre_tokens=20_000)
    b.user("<command-name>/compact</command-name>\n<command-message>compact</command-message>")
    b.prompt("next")
    b.reply("ok")
    report = replay_transcript(
        Transcript.from_dicts(b.entries), thresholds_for=ladder, default_model="m"
    )
    [judged] = report.compactions
    assert judged.agrees is None and "/compact" in judged.note


@settings(max_examples=300, deadline=None)
@given(
    data=st.binary(max_size=80).map(lambda b: bytes(b"ab\n"[x % 3] for x in b)),
    needle=st.text(alphabet="ab", min_size=1, max_size=4).map(str.encode),
    bounds=st.tuples(st.integers(0, 80), st.integers(0, 80)),
    window=st.integers(1, 9),
)
def test_windowed_search_finds_what_one_search_finds(
    tmp_path_factory, data, needle, bounds, window
):
    # The gauge searches big files a window at a time (so the UI thread is not starved of the
    # GIL); matches across window edges must still be found, first and last alike.
    import mmap

    from workbench.engine.context import gauge

    path = tmp_path_factory.mktemp("find") / "t.bin"
    path.write_bytes(data or b"\n")
    start, end = sorted(min(b, max(len(data), 1)) for b in bounds)
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
        previous = gauge.SEARCH_WINDOW
        gauge.SEARCH_WINDOW = window
        try:
            assert gauge._find(view, needle, start, end) == view.find(needle, start, end)
            assert gauge._rfind(view, needle, start, end) == view.rfind(needle, start, end)
        finally:
            gauge.SEARCH_WINDOW = previous
