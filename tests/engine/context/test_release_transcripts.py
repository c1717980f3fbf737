"""Transcripts of both releases: recorded compactions agree, no false peaks, and the gauge
follows the rules of the release that wrote the file (spec 08, issue 11)."""

from __future__ import annotations

from pathlib import Path

from current_release import SNAPSHOT_TOKENS, CurrentReleaseSession, long_session

from workbench.devtools.synth import SessionBuilder
from workbench.engine import Engine
from workbench.engine.context.replay import replay_transcript
from workbench.engine.context.thresholds import compute_thresholds
from workbench.engine.context.transcript import Transcript
from workbench.engine.profiles import profile_for

CURRENT = profile_for("2.1.332")
LEGACY = profile_for("2.1.88")


def _engine(tmp_path: Path) -> Engine:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return Engine.open(project, config_home=str(tmp_path / "claude"))


def _write(tmp_path: Path, builder: SessionBuilder, name: str = "session.jsonl") -> Path:
    return builder.write(tmp_path / "transcripts" / name)


# --- the current release's default model ------------------------------------------------------


def test_gauge_on_a_current_release_transcript_shows_the_1m_window_and_its_threshold(tmp_path):
    builder, _ = long_session()
    path = _write(tmp_path, builder)
    report = _engine(tmp_path).context.gauge(str(path))
    data = report.to_json()
    assert data["claude_version"] == "2.1.332" and data["claude_version_source"] == "transcript"
    assert report.model == "claude-opus-5-5"
    assert report.thresholds.context_window == 1_000_000
    assert data["thresholds"]["autocompact"] == 967_000
    assert report.notes == ()  # a model this release knows, compacted by threshold


def test_replay_agrees_with_the_recorded_compaction_and_has_no_false_peak(tmp_path):
    builder, fired = long_session()
    path = _write(tmp_path, builder)
    report = _engine(tmp_path).context.replay(path)
    [compaction] = report.compactions
    assert compaction.trigger == "auto" and compaction.recorded_pre_tokens == fired - 6
    # 2.1.332 records preTokens a few tokens under the count that fired: that is agreement.
    assert compaction.agrees is True and compaction.first_predicted_turn is None
    assert compaction.decided_by == "recorded" and compaction.close_call
    assert "6 under" in compaction.note
    assert report.unrecorded_fires == ()
    measured = max(t.context_tokens + t.output_tokens for t in report.turns)
    assert report.peak == max(measured, report.final_tokens)
    # Bookkeeping (a prompt snapshot per call) never reaches the estimate.
    assert max(t.estimated_before for t in report.turns) < 967_000 + SNAPSHOT_TOKENS // 2


def test_prompt_snapshots_and_request_records_are_not_context():
    b = CurrentReleaseSession(model="claude-sonnet-4-6", system_prompt_tokens=20_000)
    b.opening()
    b.prompt("hello")
    b.reply("hi")
    b.before_call()  # bookkeeping after the last usage
    t = Transcript.from_dicts(b.entries)
    usage = t.responses()[-1]
    assert t.context_tokens() == usage.context_tokens + usage.output_tokens
    assert t.stats.unknown_types == {}  # every 2.1.332 record type is known


def test_transcripts_gauge_and_preview_agree_on_a_current_release_file(tmp_path):
    builder, _ = long_session()
    path = _write(tmp_path, builder)
    engine = _engine(tmp_path)
    gauge = engine.context.gauge(str(path))
    preview = engine.context.compact_preview(str(path))
    session = engine.context.load(path)
    assert gauge.used == preview.pre_tokens == session.context_tokens()
    assert len(gauge.compactions) == len(session.compactions) == 1
    assert gauge.model == preview.model == session.model
    assert preview.threshold == 967_000
    assert any("keeps the latest messages verbatim" in n for n in preview.notes)


# --- models the current release does not compact by threshold ---------------------------------


def test_sonnet_45_under_the_current_profile_has_no_threshold_and_compacts_reactively(tmp_path):
    b = CurrentReleaseSession(model="claude-sonnet-4-5-20250929", system_prompt_tokens=150_000)
    b.opening()
    b.prompt("refactor the importer")
    for i in range(5):
        b.tool_call("Read", {"file_path": f"/repo/imp_{i}.py"}, "line\n" * 8_000)
    path = _write(tmp_path, b)
    report = _engine(tmp_path).context.gauge(str(path))
    assert report.used > 167_000  # past 2.1.88's threshold for this model
    assert not report.thresholds.threshold_compaction
    assert not report.state.above_autocompact and not report.state.at_blocking
    data = report.to_json()
    assert data["thresholds"]["autocompact"] is None and data["thresholds"]["blocking"] is None
    [note] = report.notes
    assert "does not auto-compact" in note and "reactive compaction" in note
    assert "no threshold compaction" in report.status_line()
    # The same model under 2.1.88's rules compacts at 167,000.
    old = compute_thresholds("claude-sonnet-4-5-20250929", env={}, profile=LEGACY)
    assert old.threshold_compaction and old.autocompact == 167_000


def test_a_recorded_compaction_on_a_model_without_threshold_is_called_reactive():
    b = CurrentReleaseSession(model="claude-haiku-4-5-20251001", system_prompt_tokens=150_000)
    b.prompt("go")
    b.tool_call("Read", {"file_path": "/a"}, "x\n" * 100)
    b.compact("Summary.", trigger="auto", pre_tokens=199_000)
    b.prompt("more")
    b.reply("ok")
    t = Transcript.from_dicts(b.entries)
    report = replay_transcript(
        t,
        thresholds_for=lambda m: compute_thresholds(m or "x", env={}, profile=CURRENT),
        default_model="x",
    )
    [compaction] = report.compactions
    assert compaction.threshold is None and compaction.agrees is None
    assert "reactive" in compaction.note


# --- the older release ---------------------------------------------------------------------------


def test_a_close_call_is_decided_by_the_recorded_count():
    # As on one real session: the boundary records 167,117 against a 167,000 threshold while
    # the transcript alone rebuilds 166,997 (it lacks what Claude Code held in memory).
    b = SessionBuilder(version="2.1.39", seed=5, system_prompt_tokens=150_000)
    b.prompt("go on")
    b.tool_call("Read", {"file_path": "/x"}, "y" * 400)
    estimate = Transcript.from_dicts(b.entries).context_tokens()
    b.compact("Summary.", pre_tokens=estimate + 120)
    b.prompt("next")
    b.reply("ok")
    t = Transcript.from_dicts(b.entries)
    threshold = estimate + 3
    ladder = compute_thresholds(
        "claude-sonnet-4-6",
        env={"CLAUDE_CODE_AUTO_COMPACT_WINDOW": str(threshold + 33_000)},
        profile=LEGACY,
    )
    assert ladder.autocompact == threshold
    report = replay_transcript(
        t, thresholds_for=lambda m: ladder, default_model="claude-sonnet-4-6"
    )
    [c] = report.compactions
    assert c.estimated_pre_tokens == estimate < threshold  # the estimate alone: no fire
    assert c.decided_by == "recorded" and c.margin == 117 and c.close_call
    assert c.agrees is True
    assert "117 over" in c.note and "close call" in c.note and "-120" in c.note


def test_peak_is_never_below_now_on_a_subagent_file(shared_transcripts):
    # A compaction's summarising call: one call, the estimate before it tiny, the usage big.
    path = next(shared_transcripts.rglob("agent-acompact-*.jsonl"))
    t = Transcript.load(path)
    report = replay_transcript(
        t,
        thresholds_for=lambda m: compute_thresholds(m or "x", env={}, profile=LEGACY),
        default_model="claude-opus-4-6",
    )
    assert report.peak >= report.final_tokens > 100_000
    assert report.peak_source in ("recorded", "now")


def test_real_old_release_transcripts_agree_and_have_no_false_peaks(shared_transcripts):
    engine = Engine.open(shared_transcripts, config_home=str(shared_transcripts / "none"))
    for path in sorted(shared_transcripts.rglob("*.jsonl")):
        report = engine.context.replay(path)
        assert report.claude is not None and report.claude.profile.name == "2.1.88", path
        measured = [t.context_tokens + t.output_tokens for t in report.turns]
        assert report.peak == max([*measured, report.final_tokens]), path
        for compaction in report.compactions:
            if compaction.trigger == "auto":
                assert compaction.agrees is True, (path, compaction.note)
        assert report.unrecorded_fires == (), path
