"""The sample projects' transcripts: what the demo shows, and that they match their script."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from workbench.engine import Engine
from workbench.engine.samples import install_sample, samples_root

SCRIPT = samples_root() / "tools" / "make_transcripts.py"


def _engine(tmp_path: Path, name: str) -> Engine:
    sample = install_sample(name, tmp_path)
    return Engine.open(sample.project_root, config_home=str(sample.config_home), env={})


def test_committed_samples_match_the_script(tmp_path):
    spec = importlib.util.spec_from_file_location("make_transcripts", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for generated in module.write_all(tmp_path):
        committed = samples_root() / generated.relative_to(tmp_path)
        files = sorted(p.relative_to(generated) for p in generated.rglob("*") if p.is_file())
        assert files == sorted(
            p.relative_to(committed) for p in committed.rglob("*") if p.is_file()
        )
        for rel in files:
            assert (generated / rel).read_bytes() == (committed / rel).read_bytes(), rel


def test_healthy_sample_is_comfortably_green(tmp_path):
    engine = _engine(tmp_path, "healthy")
    sessions = engine.context.sessions()
    assert 1 <= len(sessions) <= 2
    gauge = engine.context.gauge()
    assert gauge.session_id == sessions[0].session_id
    assert not gauge.state.above_warning and gauge.used > 30_000
    notes = engine.context.session_memory()
    assert notes.exists and not notes.is_empty and not notes.over_total
    assert not any(s.over_limit for s in notes.sections)


def test_warnings_sample_trips_the_ladder_and_the_limits(tmp_path):
    engine = _engine(tmp_path, "warnings")
    gauge = engine.context.gauge()
    t = gauge.thresholds
    assert t.model == "claude-sonnet-4-6" and t.autocompact == 167_000
    assert gauge.state.above_warning and not gauge.state.above_autocompact
    assert gauge.used >= t.autocompact - 20_000
    notes = engine.context.session_memory()
    assert notes.over_total and any(s.over_limit for s in notes.sections)
    preview = engine.context.compact_preview(gauge.transcript or "")
    assert preview.session_memory.truncated_sections


def test_warnings_sample_has_a_live_preserved_segment(tmp_path):
    engine = _engine(tmp_path, "warnings")
    found = []
    for info in engine.context.sessions():
        transcript = engine.context.load(info.path)
        if transcript.preserved is not None:
            found.append(transcript.preserved.status)
            current = transcript.current_messages()
            assert current[0].is_compact_boundary and current[1].is_compact_summary
    assert found == ["live"]


@pytest.mark.parametrize("name", ["healthy", "warnings"])
def test_sample_transcripts_read_cleanly_and_replay_without_surprises(tmp_path, name):
    engine = _engine(tmp_path, name)
    for info in engine.context.sessions():
        transcript = engine.context.load(info.path)
        assert transcript.stats.broken_lines == 0 and not transcript.stats.unknown_types
        report = engine.context.replay(info.path)
        assert report.unrecorded_fires == ()
        assert all(c.agrees is not False for c in report.compactions)


def test_calls_after_a_compaction_keep_the_system_prompt(tmp_path):
    # Compaction drops messages, never the system prompt and tools: each call after the
    # boundary measures at least the overhead, and the usage the samples record reconciles
    # with the estimate (the builder once dropped the prompt to a fixed 14,000 tokens, which
    # showed as a -17,000 difference in the Context pane).
    engine = _engine(tmp_path, "warnings")
    for session in ("5f7d3e21", "a26c8b94"):
        path = engine.context.resolve_transcript(session=session)
        report = engine.context.attribution(path)
        after = [c for c in report.calls if c.segment > 0]
        assert after, session
        for call in after:
            assert call.recorded is not None and call.recorded > report.overhead, session
            assert call.difference == 0, (session, call.number, call.difference)
