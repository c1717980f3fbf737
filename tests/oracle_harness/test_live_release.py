"""The real Claude Code, wired up by `workbench integrate claude`, against this checkout.

Runs the oracle's `live` check (oracle/checks/live.py) on each pinned release that is already
in the oracle's cache folder: the real CLI lists and calls the workbench's MCP tool and sends
its result back, the SessionStart hook's message reaches it, and an auto-compaction it makes
leaves a PreCompact snapshot and a PostCompact loss report that `workbench compactions` lists;
in an interactive session (a pseudo-terminal) the status line gets Claude Code's JSON and its
line shows on the screen.
Nothing is downloaded here: a release not in the cache is skipped, with the command that
installs it (`make oracle` does, and writes the same results into docs/compatibility.md).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from oracle import releases  # noqa: E402

# Read before the suite's fixtures give every test a temporary HOME.
CACHE = releases.cache_root()
PINNED = (releases.OLDEST, releases.NEWEST_KNOWN)

# Two real sessions per release (one `claude -p`, one interactive) run in the first test's
# setup: a generous bound for a loaded machine, never a speed.
pytestmark = pytest.mark.timeout(900)


def _release(version: str) -> releases.Release:
    previous = os.environ.get("ORACLE_CACHE")
    os.environ["ORACLE_CACHE"] = str(CACHE)
    try:
        found = releases.locate(version)
    finally:
        if previous is None:
            os.environ.pop("ORACLE_CACHE", None)
        else:
            os.environ["ORACLE_CACHE"] = previous
    if found is None:
        pytest.skip(
            f"Claude Code {version} is not in the oracle cache ({CACHE}); "
            f"`python -m oracle install {version}` puts it there (a download, so never here)"
        )
    if found.argv[0] == "node" and shutil.which("node") is None:
        pytest.skip(f"Claude Code {version} runs under node, and node is not installed")
    return found


@pytest.fixture(scope="module", params=PINNED)
def live(request):
    from oracle.checks import live

    release = _release(request.param)
    outcomes = {case.name: live.run_case(release, case) for case in live.CHECK.cases()}
    return release, outcomes


def _why(outcome) -> str:
    return f"{outcome.verdict}: {outcome.reason} observed={outcome.observed}"


def test_claude_code_calls_the_workbench_mcp_tool_and_gets_our_answer(live):
    release, outcomes = live
    mcp = outcomes["mcp-tool"]
    assert mcp.verdict == "agree", _why(mcp)
    assert mcp.observed["memories_in_result"] == ["Oracle note 0", "Oracle note 1", "Oracle note 2"]
    assert mcp.observed["tool_result_is_error"] is False
    # 2.1.88 puts MCP tools in the tool list; later releases defer them to a name listing.
    where = mcp.observed["mcp"]
    assert where["listed_in_tools"] or where["listed_deferred"]


def test_the_session_start_message_reaches_claude_code(live):
    _, outcomes = live
    start = outcomes["session-start"]
    assert start.verdict == "agree", _why(start)
    message = start.workbench["session_start"]["systemMessage"]
    assert "MEMORY.md: all 3 entries loaded" in message


def test_an_auto_compaction_leaves_the_snapshot_and_the_loss_report(live):
    _, outcomes = live
    compaction = outcomes["compaction-hooks"]
    assert compaction.verdict == "agree", _why(compaction)
    (record,) = compaction.workbench["compactions"]
    assert record["snapshot"]["trigger"] == "auto"
    assert record["snapshot"]["pre_tokens"] >= 167_000
    lost = compaction.workbench["lost"]
    assert "8443" in lost["numbers"]  # in the prompt, not in the summary
    assert "src/auth/session.py" not in lost["paths"]  # the summary kept it


def test_the_status_line_answers_claude_codes_json_on_its_screen(live):
    # claude -p never runs the status line; the check starts the interactive UI on a pty.
    _, outcomes = live
    status = outcomes["statusline"]
    assert status.verdict == "agree", _why(status)
    assert status.observed["our_line_on_screen"] is True
    assert "payload" in status.workbench["sources"]  # the figures Claude Code sent were used
