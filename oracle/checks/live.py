"""Claude Code wired to the workbench by `workbench integrate claude`: MCP, hooks, status line.

One session per release does all of it. The sandbox gets a small memory folder, then
`workbench integrate claude --yes --command "<this python> -m workbench"` writes the status
line, the hooks and the MCP server into the sandbox's user settings exactly as a user would
get them, so the real CLI runs this checkout. The fake model then:

1. answers the first main call with a `tool_use` of the workbench's `list_memories` MCP tool
   (the next request must carry the tool result, with the memories the sandbox holds);
2. answers the next one with a missing tool at a usage above the auto-compact threshold, so
   Claude Code compacts (the PreCompact and PostCompact hooks run around it);
3. answers the summary request with a summary that keeps one fact of the prompt and drops
   the others, and the turn after it with a short text.

`--output-format stream-json --verbose` shows the hooks' answers (SessionStart's message).
`claude -p` never runs the status line (the interactive UI draws it), so a second, interactive
session on a pseudo-terminal checks it: the status line `integrate` wrote, behind a `tee` that
keeps the JSON Claude Code sends, must answer each call with a real line (the payload's own
figures once a prompt has been answered) and that line must show on Claude Code's screen.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from oracle import runner
from oracle.checks.base import AGREE, DIFFER, ERROR, Case, Check, Outcome, scrub, tail
from oracle.extract import is_summary_request
from oracle.firing import QUIET_TOOLS
from oracle.releases import Release
from tests.fakes.messages_api import RecordedRequest, ScriptedReply, usage_total

if TYPE_CHECKING:
    from pathlib import Path

SERVER = "memory-workbench"
TOOL = f"mcp__{SERVER}__list_memories"
MODEL = "claude-sonnet-4-6"
OVER_THRESHOLD = 170_000
"""Above claude-sonnet-4-6's auto-compact point (167,000) in every release profiled."""
NOTES = {
    f"note_{i}.md": (f"Oracle note {i}", f"what the oracle wrote, number {i}") for i in range(3)
}
PROMPT = (
    "Fix the login bug in src/auth/session.py, then run the login_flow tests and check "
    "port 8443 again."
)
SUMMARY = "<summary>1. Primary request: fix the login bug in src/auth/session.py.</summary>"
"""Keeps the path of the prompt and drops the rest, so the loss report has something to find."""
PREFIX = "Memory Workbench"


@dataclass
class LiveRun:
    """The one session of a release, and what each side said about it."""

    release: str
    observed: dict[str, Any] = field(default_factory=dict)
    workbench: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    seconds: float = 0.0


class _Script:
    """The fake model's side of the session (see the module docstring)."""

    def __init__(self) -> None:
        self.main_calls = 0
        self.summary_requests = 0
        self.tool_use_id: str | None = None
        self._lock = threading.Lock()

    def respond(self, request: RecordedRequest) -> ScriptedReply | None:
        if not request.is_message:
            return None
        with self._lock:
            if is_summary_request(request):
                self.summary_requests += 1
                return ScriptedReply.text(
                    SUMMARY, usage={"input_tokens": 2_000, "output_tokens": 60}
                )
            if not runner.is_main_thread(request):
                return None  # side calls get the default answer
            self.main_calls += 1
            if self.main_calls == 1:
                reply = ScriptedReply.tool_use([(TOOL, {})], usage=usage_total(20_000))
                self.tool_use_id = reply.content[0]["id"]
                return reply
            if self.main_calls == 2:
                return ScriptedReply.tool_use(
                    [("oracle_probe_missing_tool", {})], usage=usage_total(OVER_THRESHOLD)
                )
            return ScriptedReply.text("done", usage=usage_total(5_000))


def _scenario(script: _Script) -> runner.Scenario:
    return runner.Scenario(
        prompt=PROMPT,
        args=[
            "--model",
            MODEL,
            "--output-format",
            "stream-json",
            "--verbose",
            # -p cannot ask the user; a user answers the same prompt once in a session.
            "--allowedTools",
            TOOL,
            "--disallowedTools",
            QUIET_TOOLS,
        ],
        # The hooks and the MCP server are children of claude: they get its environment, so
        # the workbench keeps its state in the sandbox and runs this checkout.
        env={
            "PYTHONPATH": str(runner.REPO_ROOT),
            "WORKBENCH_HOME": "{sandbox}/workbench-home",
            "WORKBENCH_CONFIG": "{sandbox}/workbench-config.toml",
            "WORKBENCH_POLICY_SETTINGS": "{sandbox}/no-managed-settings.json",
            "NO_COLOR": "1",
        },
        responder=script.respond,
        timeout=240,
    )


_memo: dict[str, LiveRun] = {}
_memo_locks: dict[str, threading.Lock] = {}
_memo_guard = threading.Lock()


def session(release: Release) -> LiveRun:
    """The (memoised) session for `release`: every case of the check reads the same one."""
    with _memo_guard:
        lock = _memo_locks.setdefault(release.version, threading.Lock())
    with lock:
        if release.version not in _memo:
            _memo[release.version] = _measure(release)
        return _memo[release.version]


def _write_memories(memory_dir: str) -> None:
    os.makedirs(memory_dir, exist_ok=True)
    lines = []
    for name, (title, description) in NOTES.items():
        with open(os.path.join(memory_dir, name), "w", encoding="utf-8") as handle:
            handle.write(
                f"---\nname: {title}\ndescription: {description}\ntype: project\n---\n\n"
                f"{description}.\n"
            )
        lines.append(f"- [{title}]({name}) — {description}\n")
    with open(os.path.join(memory_dir, "MEMORY.md"), "w", encoding="utf-8") as handle:
        handle.write("".join(lines))


def _measure(release: Release) -> LiveRun:
    result = LiveRun(release.version)
    script = _Script()
    scenario = _scenario(script)
    with runner.sandbox(scenario) as (box, ready):
        env = runner.scenario_env(box, ready, "http://127.0.0.1:9")
        common = {"env": env, "claude_version": release.version}
        paths = runner.workbench(box, ["paths"], **common)
        memory_dir = (paths.json() or {}).get("memory_dir") if paths.returncode == 0 else None
        if not memory_dir:
            result.error = f"workbench paths failed: {tail(paths.stderr)}"
            return result
        _write_memories(memory_dir)
        command = f"{shlex.quote(sys.executable)} -m workbench"
        integrate = runner.workbench(
            box, ["integrate", "claude", "--yes", "--command", command], **common
        )
        if integrate.returncode != 0:
            result.error = f"workbench integrate failed: {tail(integrate.stderr)}"
            return result
        result.workbench["integrated"] = [
            scrub({"path": f["path"], "action": f["action"]}, str(box.root))
            for f in (integrate.json() or {}).get("files", [])
        ]
        run = runner.run_claude(release, ready, box)
        result.seconds = run.seconds
        if not run.message_requests:
            result.error = "Claude Code sent nothing: " + (
                "timed out" if run.timed_out else tail(run.stderr or run.stdout) or "no output"
            )
            return result
        events = _stream_events(run.stdout)
        session_id = next((e.get("session_id") for e in events if e.get("session_id")), None)
        result.observed = {
            "exit_code": run.returncode,
            "main_calls": script.main_calls,
            "summary_requests": script.summary_requests,
            "mcp": _mcp_observed(run, script.tool_use_id),
            "hooks": _hook_answers(events),
            "compact_boundaries": [
                e.get("compact_metadata") or {}
                for e in events
                if e.get("type") == "system" and e.get("subtype") == "compact_boundary"
            ],
        }
        if session_id:
            history = runner.workbench(box, ["compactions", "--session", session_id], **common)
            result.workbench["compactions"] = (
                scrub(history.json(), str(box.root)) if history.returncode == 0 else None
            )
            if history.returncode != 0:
                result.workbench["compactions_error"] = tail(history.stderr)
            start = {
                "session_id": session_id,
                "cwd": str(box.project),
                "hook_event_name": "SessionStart",
                "source": "startup",
            }
            direct = _hook_directly(box, env, release.version, start, ["hook", "SessionStart"])
            result.workbench["session_start"] = direct
    result.observed["status_line"] = _interactive_status_line(release)
    return result


def _hook_directly(
    box: runner.Sandbox,
    env: dict[str, str],
    version: str,
    payload: dict[str, Any],
    argv: list[str],
    *,
    raw: bool = False,
) -> Any:
    """`workbench ARGV` on the same input, outside Claude Code, for comparison."""
    import subprocess

    full = dict(env, WORKBENCH_CLAUDE_VERSION=version)
    done = subprocess.run(
        [sys.executable, "-m", "workbench", *argv],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=box.project,
        env=full,
        timeout=120,
        check=False,
    )
    if raw:
        return {"exit_code": done.returncode, "line": done.stdout.strip()}
    try:
        return json.loads(done.stdout) if done.stdout.strip() else None
    except ValueError:
        return {"unreadable": done.stdout[:200]}


STATUS_PROMPT = "hello"
INTERACTIVE_SECONDS = 150.0
"""A bound, not a speed: the interactive start takes seconds, minutes on a loaded machine."""


def _interactive_status_line(release: Release) -> dict[str, Any]:
    """The status line only runs in the interactive UI: start `claude` on a pseudo-terminal
    with the status line `integrate` wrote (behind a `tee` that keeps each JSON it is sent),
    wait for the first call, type one prompt, and wait for a call carrying its usage."""
    import pty
    import signal
    import time

    from tests.fakes.messages_api import FakeMessagesAPI

    scenario = runner.Scenario(prompt="", env=_scenario(_Script()).env)
    seen: dict[str, Any] = {"payloads": [], "screen_has_line": False, "error": None}
    with runner.sandbox(scenario) as (box, ready):
        env = runner.scenario_env(box, ready, "http://127.0.0.1:9")
        command = f"{shlex.quote(sys.executable)} -m workbench"
        integrate = runner.workbench(
            box,
            ["integrate", "claude", "--yes", "--no-hooks", "--no-mcp", "--command", command],
            env=env,
            claude_version=release.version,
        )
        settings_file = box.config / "settings.json"
        if integrate.returncode != 0 or not settings_file.is_file():
            seen["error"] = f"workbench integrate failed: {tail(integrate.stderr)}"
            return seen
        settings = json.loads(settings_file.read_text(encoding="utf-8"))
        ours = settings["statusLine"]["command"]
        inputs = box.root / "status-inputs"
        inputs.mkdir()
        # Both sides of every call: what Claude Code sent, and what our line answered then.
        settings["statusLine"]["command"] = (
            f"tee {inputs}/call-$$.json | {ours} | tee {inputs}/line-$$.txt"
        )
        settings_file.write_text(json.dumps(settings), encoding="utf-8")
        # A first start asks about the theme, the folder and the key; a returning user is
        # past all three (the key is approved by its last 20 characters).
        (box.config / ".claude.json").write_text(
            json.dumps(
                {
                    "hasCompletedOnboarding": True,
                    "theme": "dark",
                    "customApiKeyResponses": {"approved": [runner.FAKE_KEY[-20:]], "rejected": []},
                    "projects": {
                        str(box.project): {
                            "hasTrustDialogAccepted": True,
                            "hasCompletedProjectOnboarding": True,
                        }
                    },
                }
            ),
            encoding="utf-8",
        )
        with FakeMessagesAPI.for_cli() as api:
            env = runner.scenario_env(box, ready, api.base_url)
            env["TERM"] = "xterm-256color"
            argv = list(release.argv)
            program = argv[0] if release.native else shutil_which("node", env)
            pid, fd = pty.fork()
            if pid == 0:  # the child: become claude
                os.chdir(box.project)
                os.execve(program, argv, env)
            screen = b""
            typed = False
            started = time.monotonic()
            try:
                while time.monotonic() - started < INTERACTIVE_SECONDS:
                    written = _read_terminal(fd)
                    if written is None:
                        break
                    screen += written
                    calls = sorted(inputs.glob("call-*.json"), key=lambda p: p.stat().st_mtime)
                    texts = [p.read_text(encoding="utf-8") for p in calls]
                    if not typed and any(t.strip() for t in texts):
                        time.sleep(1.0)
                        os.write(fd, STATUS_PROMPT.encode())
                        time.sleep(0.5)
                        os.write(fd, b"\r")
                        typed = True
                    if typed and any('"current_usage":{' in t.replace(" ", "") for t in texts):
                        # Read on until a line the status line printed is drawn: on a loaded
                        # machine that takes more than the moment it takes here.
                        screen = _read_until_a_line_shows(fd, screen, inputs, started)
                        break
            finally:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                os.close(fd)
        for path in sorted(inputs.glob("call-*.json"), key=lambda p: p.stat().st_mtime):
            try:
                payload = json.loads(path.read_text(encoding="utf-8"))
            except ValueError:
                continue
            answered = path.with_name(path.name.replace("call-", "line-")).with_suffix(".txt")
            in_session = answered.read_text(encoding="utf-8").strip() if answered.is_file() else ""
            figures = _hook_directly(
                box, env, release.version, payload, ["--json", "statusline"], raw=True
            )
            try:
                as_json = json.loads(figures["line"])
            except ValueError:
                as_json = {}
            window = payload.get("context_window") or {}
            seen["payloads"].append(
                {
                    "keys": sorted(payload),
                    "context_window_keys": sorted(window) if isinstance(window, dict) else None,
                    "window": window.get("context_window_size")
                    if isinstance(window, dict)
                    else None,
                    "usage": window.get("current_usage") if isinstance(window, dict) else None,
                    "line": in_session,
                    "exit_code": figures["exit_code"],
                    "source": as_json.get("source"),
                    "used": as_json.get("used"),
                }
            )
        lines = [p["line"] for p in seen["payloads"]]
        seen["screen_has_line"] = _shows_one_of(screen, lines)
        seen["typed"] = typed
    return seen


def _shows_one_of(screen: bytes, lines: list[str]) -> bool:
    """Whether the terminal output draws one of `lines` (escapes and spacing aside)."""
    plain = re.sub(
        r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07", "", screen.decode("utf-8", "replace")
    )
    squeezed = re.sub(r"\s+", "", plain)
    return any(line and re.sub(r"\s+", "", line) in squeezed for line in lines)


def _read_until_a_line_shows(fd: int, screen: bytes, inputs: Path, started: float) -> bytes:
    """Keep reading the terminal until the status line has answered every call it was sent
    (each `call-*.json` has its `line-*.txt`) and the terminal draws one of those lines, or
    the interactive bound runs out; the screen read so far. On a loaded machine both take
    longer than the moment they take here."""
    import time

    while time.monotonic() - started < INTERACTIVE_SECONDS:
        calls = list(inputs.glob("call-*.json"))
        answers = [
            call.with_name(call.name.replace("call-", "line-")).with_suffix(".txt")
            for call in calls
        ]
        printed = [p.read_text(encoding="utf-8").strip() if p.is_file() else "" for p in answers]
        if all(printed) and _shows_one_of(screen, printed):
            break
        written = _read_terminal(fd)
        if written is None:
            break
        screen += written
    return screen


def _read_terminal(fd: int) -> bytes | None:
    """What the terminal wrote within a moment (b"" if nothing); None once it has closed."""
    import select

    ready, _, _ = select.select([fd], [], [], 0.3)
    if not ready:
        return b""
    try:
        return os.read(fd, 65536)
    except OSError:
        return None


def shutil_which(name: str, env: dict[str, str]) -> str:
    import shutil

    return shutil.which(name, path=env.get("PATH")) or name


def _stream_events(stdout: str) -> list[dict[str, Any]]:
    events = []
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


def _hook_answers(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The hook runs the stream reports (releases report SessionStart's; others run silently)."""
    found = []
    for event in events:
        if event.get("type") != "system" or event.get("subtype") != "hook_response":
            continue
        try:
            answer = json.loads(event.get("stdout") or event.get("output") or "null")
        except ValueError:
            answer = None
        found.append(
            {
                "hook": event.get("hook_name") or event.get("hook_event"),
                "exit_code": event.get("exit_code"),
                "answer": answer,
            }
        )
    return found


def _mcp_observed(run: runner.Run, tool_use_id: str | None) -> dict[str, Any]:
    """Where the tool was listed, and the tool result Claude Code sent back for our call."""
    mains = run.main_requests
    listed_as_tool = [r.index for r in mains if TOOL in r.tool_names]
    # Newer releases defer MCP tools: only their names, in a listing inside the messages.
    listed_by_name = [
        r.index for r in mains if TOOL not in r.tool_names and TOOL in json.dumps(r.messages)
    ]
    result: dict[str, Any] = {
        "listed_in_tools": bool(listed_as_tool),
        "listed_deferred": bool(listed_by_name) and not listed_as_tool,
        "first_listing_call": next(
            (i for i, r in enumerate(mains) if r.index in listed_as_tool + listed_by_name), None
        ),
        "tool_result": None,
    }
    for request in mains:
        for message in request.messages:
            content = message.get("content")
            if message.get("role") != "user" or not isinstance(content, list):
                continue
            for block in content:
                if (
                    isinstance(block, dict)
                    and block.get("type") == "tool_result"
                    and block.get("tool_use_id") == tool_use_id
                ):
                    texts = _block_texts(block.get("content"))
                    result["tool_result"] = {
                        "is_error": bool(block.get("is_error")),
                        "blocks": len(texts),
                        "text": texts[0] if texts else "",
                        "after": texts[1:],
                    }
                    return result
    return result


def _block_texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        ]
    return []


# --- the cases ----------------------------------------------------------------------------


def _cases() -> list[Case]:
    return [
        Case("mcp-tool", f"Claude Code lists and calls {TOOL}; the result is the workbench's"),
        Case("session-start", "the SessionStart hook's message reaches Claude Code"),
        Case(
            "compaction-hooks",
            "auto-compaction runs PreCompact and PostCompact; `compactions` lists what it lost",
        ),
        Case("statusline", "the status line command gets Claude Code's JSON and answers"),
    ]


def run_case(release: Release, case: Case) -> Outcome:
    live = session(release)
    out = Outcome("live", case.name, release.version, AGREE, seconds=live.seconds)
    out.inputs = {"model": MODEL, "prompt": PROMPT, "summary": SUMMARY}
    if live.error:
        out.verdict, out.reason = ERROR, live.error
        return out
    judge = {
        "mcp-tool": _judge_mcp,
        "session-start": _judge_session_start,
        "compaction-hooks": _judge_compaction,
        "statusline": _judge_statusline,
    }[case.name]
    judge(live, out)
    return out


def _judge_mcp(live: LiveRun, out: Outcome) -> None:
    mcp = live.observed["mcp"]
    out.observed = {"mcp": {k: v for k, v in mcp.items() if k != "tool_result"}}
    got = mcp.get("tool_result")
    if not (mcp["listed_in_tools"] or mcp["listed_deferred"]):
        out.verdict, out.reason = DIFFER, f"{TOOL} was never offered to the model"
        return
    if got is None:
        out.verdict, out.reason = DIFFER, "no tool result came back for the MCP call"
        return
    out.observed["tool_result_is_error"] = got["is_error"]
    out.observed["tool_result_blocks"] = got["blocks"]
    try:
        answer, end = json.JSONDecoder().raw_decode(got["text"])
    except ValueError:
        out.verdict, out.reason = DIFFER, f"the tool result is not our JSON: {got['text'][:120]}"
        return
    # What the release adds after our JSON, described, never copied (its own text).
    extra = got["text"][end:].strip()
    out.observed["tool_result_after_json"] = {
        "chars": len(extra),
        "a_reminder_block": extra.startswith("<system-reminder>"),
        "further_blocks": len(got["after"]),
    }
    names = sorted(m.get("name") for m in answer.get("memories", []) if isinstance(m, dict))
    out.observed["memories_in_result"] = names
    expected = sorted(title for title, _ in NOTES.values())
    if got["is_error"] or names != expected:
        out.verdict = DIFFER
        out.reason = f"the tool result lists {names}, the sandbox holds {expected}"


def _judge_session_start(live: LiveRun, out: Outcome) -> None:
    answers = [h for h in live.observed["hooks"] if str(h["hook"]).startswith("SessionStart")]
    out.observed = {"session_start_answers": answers}
    direct = live.workbench.get("session_start")
    out.workbench = {"session_start": direct}
    first = next((h for h in answers if h["hook"] == "SessionStart:startup"), None)
    if first is None:
        out.verdict, out.reason = DIFFER, "no SessionStart:startup hook answer in the stream"
        return
    message = (first.get("answer") or {}).get("systemMessage", "")
    if first["exit_code"] != 0 or not message.startswith(PREFIX):
        out.verdict = DIFFER
        out.reason = f"the hook answered {first['answer']!r} (exit {first['exit_code']})"
    elif direct != first["answer"]:
        out.verdict = DIFFER
        out.reason = "inside Claude Code the hook said something else than when run directly"


def _judge_compaction(live: LiveRun, out: Outcome) -> None:
    boundaries = live.observed["compact_boundaries"]
    history = live.workbench.get("compactions") or {}
    records = history.get("compactions") or []
    out.observed = {
        "summary_requests": live.observed["summary_requests"],
        "boundaries": [
            {"trigger": b.get("trigger"), "pre_tokens": b.get("pre_tokens")} for b in boundaries
        ],
    }
    out.workbench = {"compactions": records}
    if not boundaries:
        out.verdict, out.reason = ERROR, "Claude Code did not compact at the scripted usage"
        return
    if len(records) != len(boundaries):
        out.verdict = DIFFER
        out.reason = (
            f"Claude Code compacted {len(boundaries)} time(s), the workbench recorded "
            f"{len(records)}: {live.workbench.get('compactions_error') or 'no record'}"
        )
        return
    record = records[0]
    snapshot, report = record.get("snapshot"), record.get("report")
    problems = []
    if snapshot is None:
        problems.append("no PreCompact snapshot")
    if report is None:
        problems.append("no PostCompact loss report")
    if problems:
        out.verdict, out.reason = DIFFER, "; ".join(problems)
        return
    # What the summary dropped: every fact the snapshot put at risk that the summary lacks.
    at_risk = {
        kind: [f["value"] for f in facts] for kind, facts in (snapshot.get("facts") or {}).items()
    }
    expected_lost = {k: [v for v in vs if v not in SUMMARY] for k, vs in at_risk.items()}
    lost = {k: list(v) for k, v in (report.get("lost") or {}).items()}
    claude_pre = boundaries[0].get("pre_tokens")
    out.workbench["pre_tokens"] = snapshot.get("pre_tokens")
    out.workbench["lost"] = lost
    if snapshot.get("trigger") != boundaries[0].get("trigger"):
        problems.append(
            f"trigger {snapshot.get('trigger')} vs Claude Code's {boundaries[0].get('trigger')}"
        )
    if not any(at_risk.values()):
        problems.append("the PreCompact snapshot found no facts in the prompt")
    if {k: sorted(v) for k, v in lost.items() if v} != {
        k: sorted(v) for k, v in expected_lost.items() if v
    }:
        problems.append(f"the loss report lists {lost}, the summary drops {expected_lost}")
    if problems:
        out.verdict, out.reason = DIFFER, "; ".join(problems)
        return
    if isinstance(claude_pre, int) and snapshot.get("pre_tokens") != claude_pre:
        out.reason = (
            f"agree on what was lost; the snapshot counted {snapshot.get('pre_tokens'):,} "
            f"tokens where Claude Code recorded {claude_pre:,}"
        )


def _judge_statusline(live: LiveRun, out: Outcome) -> None:
    seen = live.observed.get("status_line") or {}
    payloads = seen.get("payloads") or []
    out.observed = {
        "calls": len(payloads),
        "typed_a_prompt": seen.get("typed"),
        "payload_keys": payloads[-1]["keys"] if payloads else None,
        "context_window_keys": payloads[-1]["context_window_keys"] if payloads else None,
        "windows": [p["window"] for p in payloads],
        "usages": [p["usage"] for p in payloads],
        "our_line_on_screen": seen.get("screen_has_line"),
    }
    out.workbench = {
        "lines": [p["line"] for p in payloads],
        "sources": [p["source"] for p in payloads],
        "used": [p["used"] for p in payloads],
    }
    if seen.get("error"):
        out.verdict, out.reason = ERROR, seen["error"]
        return
    if not payloads:
        out.verdict, out.reason = ERROR, "the interactive session never ran the status line"
        return
    problems = [
        f"exit {p['exit_code']} or a fallback line ({p['line']!r})"
        for p in payloads
        if p["exit_code"] != 0 or not p["line"] or "ctx ?" in p["line"]
    ]
    with_usage = [p for p in payloads if isinstance(p["usage"], dict)]
    if not with_usage:
        problems.append("no call carried the usage of the prompt typed")
    for p in with_usage:
        total = sum(v for v in p["usage"].values() if isinstance(v, int))
        if p["source"] != "payload" or p["used"] != total:
            problems.append(
                f"the line counted {p['used']} from {p['source']}, the payload said {total}"
            )
    if not seen.get("screen_has_line"):
        problems.append("our line never showed on Claude Code's screen")
    if problems:
        out.verdict, out.reason = DIFFER, "; ".join(problems)


NOTES_SEEN = (
    "Seen on both releases: `claude -p` loads the MCP server `integrate` puts in the user's "
    "global config, runs the SessionStart hook at start-up and again (source `compact`) after "
    "each compaction, PreCompact before the summary request and PostCompact after it, and "
    "reports SessionStart's answer in the stream (`hook_response`); PreCompact and PostCompact "
    "run without a stream event, so the check reads what they left under WORKBENCH_HOME.",
    "PostCompact's input carries `compact_summary` in both releases (the loss report reads it "
    "from there, or from the transcript's summary record); PreCompact's `custom_instructions` "
    "is null for an auto-compaction; 2.1.332 adds `prompt_id` to every hook input and more keys "
    "to Stop's. None of it needed a change in the hook code.",
    "An MCP tool needs permission: without `--allowedTools` (or an answer to the prompt in an "
    "interactive session) Claude Code answers the call with a permission error instead of "
    "running it. `integrate` does not pre-approve tools.",
    "2.1.88 puts every MCP tool in the request's tool list. 2.1.332 defers them: the server "
    "is still connecting at the first call, later requests only name the tools in a reminder "
    "inside the messages (schemas load through ToolSearch), and that reminder is appended to "
    "the tool result's text after the workbench's JSON. Calling the tool directly works in "
    "both and the result is the workbench's answer.",
    "`claude -p` never runs the status line in either release (it belongs to the interactive "
    "UI). Started on a pseudo-terminal (onboarding, folder trust and the key approved in the "
    "sandbox's .claude.json), both run it before the first prompt, with `current_usage` null "
    "and the window size set (200,000 on 2.1.88's default model, 1,000,000 on 2.1.332's), "
    "and again after each answer with that call's usage; the workbench's line shows under the "
    "prompt.",
)


CHECK = Check(
    "live",
    "Claude Code with `workbench integrate`: MCP, hooks, status line",
    _cases,
    run_case,
    weight=30,
    notes=NOTES_SEEN,
)
