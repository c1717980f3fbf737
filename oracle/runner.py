"""Run one `claude -p` in a sandbox against the fake API, and the workbench beside it.

A sandbox is a fresh temp folder with its own HOME, CLAUDE_CONFIG_DIR and project folder;
nothing of the machine's real configuration is visible to either program. The environment
is built from scratch (spec 08's list), never inherited, so a developer's own `CLAUDE_*` or
`ANTHROPIC_*` variables cannot leak into a run.

Everything a later check needs is a field of `Scenario`; `{sandbox}` in any of them becomes
the sandbox's root. For example, Claude Code wired to the workbench's MCP server and a hook,
with a CLAUDE.md tree, answering the first call with a call to one of the workbench's tools:

    scenario = Scenario(
        prompt="what loaded?",
        args=["--mcp-config", "{sandbox}/mcp.json", "--model", "claude-sonnet-4-6"],
        sandbox_files={"mcp.json": json.dumps({"mcpServers": {"wb": {"command": "workbench",
                                                                      "args": ["mcp"]}}})},
        project_settings={"hooks": {"PreCompact": [{"hooks": [{"type": "command",
                                                             "command": "workbench hook PreCompact"}]}]}},
        project_files={"CLAUDE.md": "Use tabs.\n@docs/more.md\n", "docs/more.md": "More.\n"},
        extra_path=[workbench_bin()],
        responder=lambda req: ScriptedReply.tool_use([("mcp__wb__index", {})]) if ... else None,
    )
    with run(release, scenario) as r:
        blocks = extract.file_blocks(r.first_main)     # the CLAUDE.md files it loaded
        results = r.main_requests[1].messages[-1]      # the tool result it sent back
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oracle.releases import Release
from tests.fakes.messages_api import FakeMessagesAPI, RecordedRequest, Responder

MIN_MAIN_TOOLS = 3
"""A main-thread call carries the whole tool list; side calls carry none or one."""


def is_main_thread(request: RecordedRequest) -> bool:
    return request.is_message and len(request.tool_names) >= MIN_MAIN_TOOLS


FAKE_KEY = "oracle-fake-key"  # any non-empty value: the fake API ignores it
REPO_ROOT = Path(__file__).resolve().parent.parent


def base_env(home: Path, config: Path, base_url: str) -> dict[str, str]:
    """The environment spec 08 prescribes for every run: loopback only, no telemetry."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "TMPDIR": str(home / "tmp"),
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(config),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": FAKE_KEY,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "NO_PROXY": "127.0.0.1,localhost",
    }


@dataclass
class Scenario:
    """What one run sets up: the project, settings, files, environment and arguments."""

    prompt: str = "hello"
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    """Added to (or, with a None-like empty string, overriding) the base environment."""
    project: str = "project"
    """The project folder, relative to the sandbox (any characters, any length)."""
    cwd: str = ""
    """Where claude runs, relative to the project (default: the project itself)."""
    git: bool = False
    project_files: dict[str, str | bytes] = field(default_factory=dict)
    config_files: dict[str, str | bytes] = field(default_factory=dict)
    """Files under CLAUDE_CONFIG_DIR (e.g. `projects/<name>/memory/MEMORY.md`)."""
    sandbox_files: dict[str, str | bytes] = field(default_factory=dict)
    """Files anywhere in the sandbox (e.g. an autoMemoryDirectory target)."""
    user_settings: dict[str, Any] | None = None
    project_settings: dict[str, Any] | None = None
    local_settings: dict[str, Any] | None = None
    flag_settings: dict[str, Any] | None = None
    """Written to a file and passed with `--settings`."""
    timeout: float = 90.0
    responder: Responder | None = None
    extra_path: list[str] = field(default_factory=list)
    """Folders put first on PATH (e.g. `workbench_bin()`, for hooks and MCP servers that run
    `workbench ...` from inside the session)."""


@dataclass
class Sandbox:
    root: Path
    home: Path
    config: Path
    project: Path

    def relative(self, path: str | os.PathLike[str]) -> str:
        """`path` with the sandbox root replaced by `<sandbox>` (for recordings)."""
        text = os.fspath(path)
        return text.replace(str(self.root), "<sandbox>")


@dataclass
class Run:
    """What one run did: exit, output, every request, and the files it left."""

    release: Release
    scenario: Scenario
    sandbox: Sandbox
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool
    requests: list[RecordedRequest]
    responder_errors: list[str]
    workdir: Path | None = None

    @property
    def message_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.is_message]

    @property
    def main_requests(self) -> list[RecordedRequest]:
        """Main-thread calls: the ones carrying the session's tool list.

        Some releases make a tool-less side call first (a small model, before the session's
        first call), so "the first request" is not always the main one.
        """
        return [r for r in self.message_requests if is_main_thread(r)]

    @property
    def first_main(self) -> RecordedRequest | None:
        found = self.main_requests
        return found[0] if found else None

    def transcripts(self) -> list[Path]:
        """Main-session transcripts Claude Code wrote (subagent files excluded)."""
        projects = self.sandbox.config / "projects"
        if not projects.is_dir():
            return []
        return sorted(p for p in projects.glob("*/*.jsonl"))

    def all_jsonl(self) -> list[Path]:
        projects = self.sandbox.config / "projects"
        return sorted(projects.rglob("*.jsonl")) if projects.is_dir() else []

    def env(self) -> dict[str, str]:
        """The environment the run had, minus the fake URL (the fake is gone)."""
        return scenario_env(self.sandbox, self.scenario, "http://127.0.0.1:9")

    @property
    def cwd(self) -> Path:
        return self.workdir or self.sandbox.project


def workbench_bin() -> str:
    """The folder holding this checkout's `workbench` script (the running virtualenv's bin)."""
    return str(Path(sys.executable).parent)


def scenario_env(sandbox: Sandbox, scenario: Scenario, base_url: str) -> dict[str, str]:
    env = base_env(sandbox.home, sandbox.config, base_url)
    if scenario.extra_path:
        env["PATH"] = os.pathsep.join([*scenario.extra_path, env["PATH"]])
    for key, value in scenario.env.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def _write(path: Path, content: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        # newline="" keeps CRLF cases byte-exact.
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.write(content)


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


SANDBOX_MARK = "{sandbox}"
"""Written in settings, env values, args or file text, it becomes the sandbox's root path."""


def expand(value: Any, root: str) -> Any:
    """`value` with every `{sandbox}` replaced by `root`, recursively."""
    if isinstance(value, str):
        return value.replace(SANDBOX_MARK, root)
    if isinstance(value, list):
        return [expand(v, root) for v in value]
    if isinstance(value, dict):
        return {k: expand(v, root) for k, v in value.items()}
    return value


def materialise(scenario: Scenario, root: Path) -> Scenario:
    """A copy of `scenario` with `{sandbox}` expanded everywhere it may appear."""
    text = str(root)
    files = {
        name: getattr(scenario, name) for name in ("project_files", "config_files", "sandbox_files")
    }
    return dataclasses.replace(
        scenario,
        prompt=expand(scenario.prompt, text),
        args=expand(scenario.args, text),
        env=expand(scenario.env, text),
        user_settings=expand(scenario.user_settings, text),
        project_settings=expand(scenario.project_settings, text),
        local_settings=expand(scenario.local_settings, text),
        flag_settings=expand(scenario.flag_settings, text),
        **{
            name: {k: expand(v, text) if isinstance(v, str) else v for k, v in value.items()}
            for name, value in files.items()
        },
    )


@contextmanager
def sandbox(scenario: Scenario, *, keep: bool = False) -> Iterator[tuple[Sandbox, Scenario]]:
    """A fresh sandbox laid out for `scenario`, and the scenario with `{sandbox}` expanded.

    Removed afterwards unless `keep`.
    """
    root = Path(tempfile.mkdtemp(prefix="oracle-", dir=os.environ.get("ORACLE_TMP") or "/tmp"))
    box = Sandbox(
        root=root, home=root / "home", config=root / "config", project=root / scenario.project
    )
    try:
        ready = materialise(scenario, root)
        for folder in (box.home, box.home / "tmp", box.config, box.project):
            folder.mkdir(parents=True, exist_ok=True)
        if ready.git:
            subprocess.run(["git", "init", "-q", str(box.project)], check=True, timeout=30)
        for rel, content in ready.project_files.items():
            _write(box.project / rel, content)
        for rel, content in ready.config_files.items():
            _write(box.config / rel, content)
        for rel, content in ready.sandbox_files.items():
            _write(box.root / rel, content)
        if ready.user_settings is not None:
            _write(box.config / "settings.json", _json(ready.user_settings))
        if ready.project_settings is not None:
            _write(box.project / ".claude" / "settings.json", _json(ready.project_settings))
        if ready.local_settings is not None:
            _write(box.project / ".claude" / "settings.local.json", _json(ready.local_settings))
        if ready.flag_settings is not None:
            _write(box.root / "flag-settings.json", _json(ready.flag_settings))
        yield box, ready
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


def claude_argv(release: Release, box: Sandbox, scenario: Scenario) -> list[str]:
    argv = [*release.argv, "-p", scenario.prompt]
    if scenario.flag_settings is not None:
        argv += ["--settings", str(box.root / "flag-settings.json")]
    return argv + list(scenario.args)


def run_claude(
    release: Release, scenario: Scenario, box: Sandbox, *, cwd: Path | None = None
) -> Run:
    """Run `claude -p` once in `box` (a materialised scenario), bounded by its timeout."""
    with FakeMessagesAPI.for_cli(scenario.responder) as api:
        env = scenario_env(box, scenario, api.base_url)
        if cwd is None:
            cwd = box.project / scenario.cwd if scenario.cwd else box.project
        started = time.monotonic()
        timed_out = False
        proc = subprocess.Popen(
            claude_argv(release, box, scenario),
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # so a timeout ends the CLI and anything it started
        )
        try:
            out, err = proc.communicate(timeout=scenario.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, 9)
            out, err = proc.communicate()
        seconds = time.monotonic() - started
        requests = list(api.requests)
        errors = list(api.errors)
    return Run(
        release=release,
        scenario=scenario,
        sandbox=box,
        returncode=proc.returncode,
        stdout=out.decode("utf-8", "replace"),
        stderr=err.decode("utf-8", "replace"),
        seconds=seconds,
        timed_out=timed_out,
        requests=requests,
        responder_errors=errors,
        workdir=cwd,
    )


@contextmanager
def run(release: Release, scenario: Scenario, *, keep: bool = False) -> Iterator[Run]:
    """`with run(release, scenario) as r:` — the sandbox lives until the block ends."""
    with sandbox(scenario, keep=keep) as (box, ready):
        yield run_claude(release, ready, box)


# --- the workbench beside it --------------------------------------------------------------


@dataclass
class WorkbenchResult:
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout) if self.stdout.strip() else None


def workbench(
    box: Sandbox,
    args: list[str],
    *,
    env: Mapping[str, str] | None = None,
    claude_version: str | None = None,
    cwd: Path | None = None,
    json_output: bool = True,
    timeout: float = 120,
) -> WorkbenchResult:
    """Run the workbench CLI of this checkout in the sandbox, with the run's environment.

    `WORKBENCH_CLAUDE_VERSION` names the release under test, so once version profiles exist
    the workbench answers for the same release the oracle ran.
    """
    full_env = dict(env or base_env(box.home, box.config, "http://127.0.0.1:9"))
    full_env.pop("ANTHROPIC_API_KEY", None)  # offline engines only; nothing to call
    full_env.pop("ANTHROPIC_BASE_URL", None)
    full_env.update(
        {
            "WORKBENCH_HOME": str(box.root / "workbench-home"),
            "WORKBENCH_CONFIG": str(box.root / "workbench-config.toml"),
            "WORKBENCH_POLICY_SETTINGS": str(box.root / "no-managed-settings.json"),
            "PYTHONPATH": str(REPO_ROOT),
            "NO_COLOR": "1",
            "COLUMNS": "200",
        }
    )
    if claude_version:
        full_env["WORKBENCH_CLAUDE_VERSION"] = claude_version
    argv = [sys.executable, "-m", "workbench", *(["--json"] if json_output else []), *args]
    proc = subprocess.run(
        argv,
        cwd=cwd or box.project,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return WorkbenchResult(proc.returncode, proc.stdout, proc.stderr)
