"""The commands Claude Code runs on every prompt refresh and session event start lean.

`workbench statusline` and `workbench hook EVENT` run as whole processes many times a
session, so what they import is part of what the user waits for. These tests pin what the
hot paths must not load (a regression shows up here, not as a slower benchmark nobody ran)
and that the CLI's parser-free fast path reads those command lines exactly as argparse does.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.cli import COMMAND_MODULE, build_parser, fast_args

REPO = Path(__file__).resolve().parents[2]

NOT_ON_HOT_PATHS = ("platformdirs", "subprocess", "shutil", "datetime", "decimal", "yaml")
"""Each costs milliseconds to import and none is needed to answer a status line or a
SessionStart hook (they load when a command really uses them)."""

NEVER_ON_HOT_PATHS = ("argparse", "textual", "rich", "anthropic", "tiktoken")
"""No parser is built for the command lines Claude Code runs (`cli.fast_args`), and neither
front end nor an API client is used to answer them."""

NO_DATACLASSES = ("dataclasses", "inspect")
"""The records of the status line's and the SessionStart hook's modules are
`workbench.engine.records.Record`s: `dataclasses` compiles each class's methods when it is
created and imports `inspect` (with ast, dis and tokenize)."""


@pytest.mark.parametrize(
    "argv", [["statusline"], ["hook", "SessionStart"], ["hook", "PreCompact"], ["hook", "Nope"]]
)
def test_the_fast_path_reads_the_line_as_argparse_does(argv):
    fast = fast_args(argv)
    assert fast is not None
    parsed = build_parser((COMMAND_MODULE[argv[0]],)).parse_args(argv)
    assert vars(fast) == vars(parsed)


@pytest.mark.parametrize(
    "argv",
    [
        ["statusline", "--format", "{tokens}"],
        ["--json", "statusline"],
        ["hook", "Stop", "--propose"],
        ["hook", "--help"],
        ["hook"],
        ["gauge"],
        [],
    ],
)
def test_anything_else_goes_through_argparse(argv):
    assert fast_args(argv) is None


def _imported(argv: list[str], payload: dict, tmp_path: Path) -> set[str]:
    """The modules `python -m workbench ARGV` imported, from `-X importtime`."""
    env = {
        **os.environ,
        "HOME": str(tmp_path / "home"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
        "WORKBENCH_HOME": str(tmp_path / "workbench"),
        "NO_COLOR": "1",
    }
    for name in ("WORKBENCH_CONFIG", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "CLAUDE_CODE_COMMAND"):
        env.pop(name, None)
    env["PATH"] = os.path.dirname(sys.executable)  # no `claude` to ask for its version
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "workbench", *argv],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip()
    return set(re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)", done.stderr, re.M))


def test_the_engine_package_does_not_load_the_facade_with_its_errors():
    code = "import sys, workbench.engine.errors; print('workbench.engine.engine' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.stdout.strip() == "False", done.stderr[-2000:]
    code = "from workbench.engine import Engine; print(Engine.__module__)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.stdout.strip() == "workbench.engine.engine", done.stderr[-2000:]


def _top_level(modules: set[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


def test_the_status_line_loads_no_parser_and_nothing_it_does_not_use(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    payload = {
        "cwd": str(project),
        "model": {"id": "claude-sonnet-4-6", "display_name": "Sonnet 4.6"},
        "context_window": {
            "context_window_size": 200_000,
            "current_usage": {"input_tokens": 3, "output_tokens": 5},
        },
    }
    loaded = _imported(["statusline"], payload, tmp_path)
    unwanted = {*NOT_ON_HOT_PATHS, *NEVER_ON_HOT_PATHS, *NO_DATACLASSES}
    assert _top_level(loaded).isdisjoint(unwanted), sorted(_top_level(loaded) & unwanted)
    # Only the context commands' module: no other command area is imported.
    commands = {m for m in loaded if m.startswith("workbench.commands.")}
    assert commands == {"workbench.commands.common", "workbench.commands.context"}


def test_the_status_line_from_a_transcript_loads_no_parser_and_no_dataclasses(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    transcript = project / "session.jsonl"
    usage = {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 2_000}
    record = {
        "type": "assistant",
        "uuid": "a1",
        "sessionId": "session",
        "message": {"role": "assistant", "model": "claude-sonnet-4-6", "usage": usage},
    }
    transcript.write_text(json.dumps(record) + "\n")
    payload = {
        "cwd": str(project),
        "transcript_path": str(transcript),
        "model": "claude-sonnet-4-6",
    }
    loaded = _imported(["statusline"], payload, tmp_path)
    unwanted = {*NOT_ON_HOT_PATHS, *NEVER_ON_HOT_PATHS, *NO_DATACLASSES}
    assert _top_level(loaded).isdisjoint(unwanted), sorted(_top_level(loaded) & unwanted)


def test_the_session_start_hook_loads_nothing_it_does_not_use(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    payload = {
        "session_id": "hot-path",
        "cwd": str(project),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    loaded = _imported(["hook", "SessionStart"], payload, tmp_path)
    unwanted = {*NOT_ON_HOT_PATHS, *NEVER_ON_HOT_PATHS, *NO_DATACLASSES}
    assert _top_level(loaded).isdisjoint(unwanted), sorted(_top_level(loaded) & unwanted)
    commands = {m for m in loaded if m.startswith("workbench.commands.")}
    assert commands == {"workbench.commands.common", "workbench.commands.live"}


def test_each_modules_commands_are_the_ones_it_registers():
    from workbench.cli import COMMANDS_BY_MODULE

    for module, names in COMMANDS_BY_MODULE.items():
        parser = build_parser((module,))
        (commands,) = [a for a in parser._actions if a.dest == "command"]
        assert sorted(commands.choices) == sorted(names.split()), module  # type: ignore[arg-type]


@pytest.mark.parametrize("argv", [["gauge"], ["sync", "status"], ["--json", "recall", "deploy"]])
def test_a_command_line_imports_only_its_own_commands_module(argv):
    code = (
        "import sys, workbench.cli as c\n"
        f"argv = {argv!r}\n"
        "c._parse(argv, c.first_command(argv), app_only=False, wants_help=False)\n"
        "print(sorted(m for m in sys.modules if m.startswith('workbench.commands.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    own = COMMAND_MODULE[next(a for a in argv if not a.startswith("-"))]
    imported = set(eval(out.stdout))  # a printed list of module names
    assert own in imported
    assert not imported & (set(COMMAND_MODULE.values()) - {own})  # no other area's commands
