"""Knowing which Claude Code the user has: flag, environment, config, transcript, CLI."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from workbench.devtools.synth import SessionBuilder
from workbench.engine import Engine
from workbench.engine.errors import UserInputError
from workbench.engine.profiles.detect import (
    CLI_TIMEOUT_S,
    VersionResolver,
    transcript_version,
    version_request,
)


def fake_claude(folder: Path, script: str) -> Path:
    """An executable `claude` in `folder` running a small shell script."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "claude"
    path.write_text("#!/bin/sh\n" + script + "\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def cli_env(tmp_path: Path, script: str) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    fake_claude(bin_dir, script)
    return {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}",
        "WORKBENCH_CLAUDE_COMMAND": "claude",
    }


# --- the request -------------------------------------------------------------------------------


def test_flag_beats_environment_beats_config_beats_auto():
    env = {"WORKBENCH_CLAUDE_VERSION": "2.1.88"}
    assert version_request("2.1.300", env, "2.1.1").value == "2.1.300"
    assert version_request(None, env, "2.1.1").source == "env"
    assert version_request(None, {}, "2.1.1").source == "config"
    request = version_request(None, {})
    assert request.is_auto and request.source == "default"
    assert version_request("AUTO", {}).is_auto


@pytest.mark.parametrize("bad", ["latest", "2.1", "v2", "2.1.x"])
def test_a_bad_version_is_a_usage_error(bad):
    with pytest.raises(UserInputError, match="not a Claude Code version"):
        version_request(bad, {})


# --- auto --------------------------------------------------------------------------------------


def test_auto_takes_the_transcripts_own_version(tmp_path: Path):
    b = SessionBuilder(version="2.1.39")
    b.prompt("hi")
    b.reply("hello")
    b.version = "2.1.332"  # resumed by a newer release: the last writer counts
    b.prompt("again")
    b.reply("yes")
    path = b.write(tmp_path / "s.jsonl")
    assert transcript_version(path) == "2.1.332"
    resolver = VersionResolver(version_request(None, {}), {"WORKBENCH_CLAUDE_COMMAND": ""})
    found = resolver.for_transcript(path)
    assert (found.version, found.source, found.profile.name) == ("2.1.332", "transcript", "2.1.332")


def test_a_transcript_without_a_version_falls_back_to_the_newest_profile(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    path.write_text('{"type":"user","message":{"role":"user","content":"hi"}}\n')
    resolver = VersionResolver(version_request(None, {}), {"WORKBENCH_CLAUDE_COMMAND": ""})
    found = resolver.for_transcript(path)
    assert (found.version, found.source) == ("2.1.332", "newest")


def test_an_explicit_version_wins_over_the_transcript(tmp_path: Path):
    b = SessionBuilder(version="2.1.332")
    b.prompt("hi")
    path = b.write(tmp_path / "s.jsonl")
    resolver = VersionResolver(version_request("2.1.88", {}), {})
    assert resolver.for_transcript(path).profile.name == "2.1.88"


def test_auto_asks_claude_once_per_installed_binary(tmp_path: Path):
    calls = tmp_path / "calls"
    env = cli_env(tmp_path, f'echo x >> "{calls}"; echo "2.1.120 (Claude Code)"')
    cache = tmp_path / "cache"
    first = VersionResolver(version_request(None, env), env, cache).default()
    assert (first.version, first.source) == ("2.1.120", "claude-cli")
    again = VersionResolver(version_request(None, env), env, cache).default()
    assert again.version == "2.1.120"
    assert calls.read_text().count("x") == 1  # the second answer came from the cache
    assert json.loads((cache / "claude-version.json").read_text())["version"] == "2.1.120"


def test_without_ask_cli_nothing_runs_until_refresh(tmp_path: Path):
    calls = tmp_path / "calls"
    env = cli_env(tmp_path, f'echo x >> "{calls}"; echo 2.1.88')
    resolver = VersionResolver(version_request(None, env), env, tmp_path / "cache", ask_cli=False)
    assert resolver.default().source == "newest" and not calls.exists()
    assert resolver.refresh().version == "2.1.88"
    assert resolver.default().source == "claude-cli"


def test_a_hanging_claude_is_bounded_by_the_timeout(tmp_path: Path):
    env = cli_env(tmp_path, "sleep 30; echo 2.1.88")
    started = time.monotonic()
    found = VersionResolver(version_request(None, env), env, None).default()
    assert found.source == "newest"
    assert time.monotonic() - started < CLI_TIMEOUT_S + 8  # bounded, generously


def test_a_claude_that_prints_no_version_is_ignored(tmp_path: Path):
    env = cli_env(tmp_path, "echo oops; exit 3")
    assert VersionResolver(version_request(None, env), env, None).default().source == "newest"


def test_the_engine_opens_with_the_requested_release(tmp_path: Path):
    (tmp_path / "p").mkdir()
    engine = Engine.open(tmp_path / "p", config_home=str(tmp_path / "c"), claude_version="2.1.88")
    assert engine.claude.to_json()["claude_version"] == "2.1.88"
    assert engine.claude.to_json()["claude_version_source"] == "flag"
    assert engine.profile.name == "2.1.88"
