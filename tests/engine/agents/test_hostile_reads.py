"""Every read of a file someone else could have put there goes through `userfiles` (issue 10):
a named pipe, a link to /dev/zero or an oversize file in each place gives one clear refusal
(or is skipped), never a hang or a memory blow-up.

Each case runs in a thread with a generous deadline. A read that would block on a pipe is
released at the deadline (a writer opens and closes the pipe) so a regression fails the test
instead of hanging the run.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hostile import make_fifo

from workbench.engine import Engine
from workbench.engine.userfiles import MEMORY_FILE_LIMIT, NOTES_LIMIT, UnreadableFileError

T = TypeVar("T")
DEADLINE_S = 15.0
"""Generous: each case answers in milliseconds when it does not wait on the pipe."""


def bounded(fn: Callable[[], T], *fifos: Path) -> T:
    """`fn()` within the deadline, its exception re-raised; a stuck call fails the test."""
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            result["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(DEADLINE_S)
    if worker.is_alive():
        for fifo in fifos:  # let the blocked open or read return, so the thread ends
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(5)
        pytest.fail(f"the call did not return within {DEADLINE_S:.0f} s (it waited on a pipe)")
    if "error" in result:
        raise result["error"]
    return result["value"]


def oversize(path: Path, size: int) -> Path:
    """A sparse file of `size` bytes (costs no disk)."""
    with open(path, "wb") as handle:
        handle.truncate(size)
    return path


@pytest.fixture
def engine(agent_engine: Engine) -> Engine:
    return agent_engine


@pytest.fixture
def memory(engine: Engine) -> Path:
    return Path(engine.locations.memory_dir)


# --- review queue and the Review pane ---------------------------------------------------------


def test_review_propose_delete_refuses_a_pipe(engine: Engine, memory: Path) -> None:
    from workbench.engine.agents.review_queue import ReviewQueue

    fifo = make_fifo(memory / "piped.md")
    with pytest.raises(UnreadableFileError, match="named pipe"):
        bounded(lambda: ReviewQueue(engine).propose_delete(str(fifo), source="dream"), fifo)


def test_review_accept_refuses_a_file_swapped_for_a_pipe(engine: Engine, memory: Path) -> None:
    from workbench.engine.agents.review_queue import ReviewQueue

    queue = ReviewQueue(engine)
    target = memory / "feedback_testing.md"
    deleting = queue.propose_delete(str(target), source="dream")
    target.unlink()
    make_fifo(target)
    with pytest.raises(UnreadableFileError, match="named pipe"):
        bounded(lambda: queue.accept(deleting.id), target)
    assert [p.id for p in queue.list()] == [deleting.id]  # still pending, nothing lost


def test_review_write_checked_refuses_a_pipe(engine: Engine, memory: Path) -> None:
    from workbench.engine.agents.review_queue import ReviewQueue

    fifo = make_fifo(memory / "piped.md")
    with pytest.raises(UnreadableFileError, match="named pipe"):
        bounded(lambda: ReviewQueue(engine).write_checked(str(fifo), "new\n", None), fifo)


def test_review_list_skips_a_pipe_among_proposals(engine: Engine, memory: Path) -> None:
    from workbench.engine.agents.review_queue import ReviewQueue

    queue = ReviewQueue(engine)
    made = queue.propose_delete(str(memory / "feedback_testing.md"), source="dream")
    fifo = make_fifo(queue.folder / "0-bad.json")
    assert [p.id for p in bounded(queue.list, fifo)] == [made.id]


def test_review_items_show_a_pipe_as_unreadable(engine: Engine, memory: Path) -> None:
    from workbench.engine.agents.review_queue import ReviewQueue

    target = memory / "feedback_testing.md"
    ReviewQueue(engine).propose_delete(str(target), source="dream")
    target.unlink()
    make_fifo(target)
    (view,) = bounded(engine.agents.review_items, target)
    assert view.path == "feedback_testing.md"


# --- store --------------------------------------------------------------------------------------


def test_store_update_check_refuses_a_pipe(engine: Engine, memory: Path) -> None:
    fifo = make_fifo(memory / "piped.md")
    with pytest.raises(UnreadableFileError, match="named pipe"):
        bounded(lambda: engine.memories.update(fifo, "text\n", "0" * 16), fifo)


def test_store_rename_refuses_an_oversize_memory(engine: Engine, memory: Path) -> None:
    big = oversize(memory / "big.md", MEMORY_FILE_LIMIT + 1)
    with pytest.raises(UnreadableFileError, match="limit"):
        bounded(lambda: engine.memories.rename(big, "bigger.md"))
    assert big.exists() and not (memory / "bigger.md").exists()


# --- history ------------------------------------------------------------------------------------


def test_history_write_over_a_pipe_is_refused(engine: Engine, memory: Path) -> None:
    fifo = make_fifo(memory / "piped.md")
    with pytest.raises(UnreadableFileError, match="named pipe"):
        bounded(lambda: engine.history.write(fifo, b"x\n", "save"), fifo)


def test_history_log_that_is_a_pipe_is_one_error(engine: Engine) -> None:
    history = engine.history
    history.folder.mkdir(parents=True, exist_ok=True)
    fifo = make_fifo(history.log_path)
    with pytest.raises(UnreadableFileError, match="named pipe"):
        bounded(history.entries, fifo)


# --- agents' own files --------------------------------------------------------------------------


def test_session_notes_that_are_a_pipe_are_refused(engine: Engine, tmp_path: Path) -> None:
    from workbench.engine.agents.session_update import NotesTarget, SessionMemoryUpdater

    fifo = make_fifo(tmp_path / "summary.md")
    target = NotesTarget("s1", str(fifo), str(tmp_path / "s1.jsonl"))
    with pytest.raises(UnreadableFileError, match="named pipe"):
        bounded(lambda: SessionMemoryUpdater(engine)._notes_now(target), fifo)


def test_daily_log_that_is_a_pipe_is_refused(engine: Engine) -> None:
    from workbench.engine.agents.daily_log import append_entry

    when = datetime(2026, 3, 4, 10, 30).astimezone()
    path = Path(engine.locations.daily_log_path(when.date()))
    path.parent.mkdir(parents=True)
    fifo = make_fifo(path)
    with pytest.raises(UnreadableFileError, match="named pipe"):
        bounded(lambda: append_entry(engine, "a note", now=when), fifo)


def test_dream_lock_that_is_a_pipe_is_refused(memory: Path) -> None:
    from workbench.engine.agents.dream_lock import ConsolidationLock

    fifo = make_fifo(memory / ".consolidate-lock")
    with pytest.raises(UnreadableFileError, match="named pipe"):
        bounded(lambda: ConsolidationLock(fifo).try_acquire(), fifo)


def test_extraction_cursor_that_is_a_pipe_reads_as_fresh(engine: Engine) -> None:
    from workbench.engine.agents.extraction import CursorStore

    store = CursorStore(engine)
    path = store._path("s1")
    path.parent.mkdir(parents=True, exist_ok=True)
    fifo = make_fifo(path)
    assert bounded(lambda: store.load("s1"), fifo) == type(store.load("none"))()


# --- team sync ---------------------------------------------------------------------------------


def _client(tmp_path: Path, engine: Engine | None = None) -> Any:
    from workbench.engine.team.sync.client import TeamSyncClient
    from workbench.engine.team.sync.state import SyncStateStore

    team = tmp_path / "team"
    team.mkdir(exist_ok=True)
    return TeamSyncClient(
        server="http://127.0.0.1:9",
        repo="acme/app",
        token="t",
        team_dir=str(team),
        history=engine.history if engine is not None else None,
        state_store=SyncStateStore(tmp_path / "sync"),
    )


def test_pull_over_a_local_pipe_skips_it_with_a_reason(tmp_path: Path) -> None:
    client = _client(tmp_path)
    fifo = make_fifo(tmp_path / "team" / "notes.md")
    key, what, skipped = bounded(lambda: client._write_one("notes.md", "hello\n", "g"), fifo)
    assert (key, what) == ("notes.md", "skipped")
    assert "named pipe" in skipped.detail


def test_push_overwrite_keep_does_not_wait_on_a_pipe(tmp_path: Path, engine: Engine) -> None:
    from workbench.engine.team.sync.client import _OverwriteGuard

    guard = _OverwriteGuard(_client(tmp_path, engine))
    guard.theirs["notes.md"] = b"theirs\n"
    fifo = make_fifo(tmp_path / "team" / "notes.md")
    assert bounded(lambda: guard._keep("notes.md"), fifo) is None


def test_sync_state_that_is_a_pipe_reads_as_fresh(tmp_path: Path) -> None:
    from workbench.engine.team.sync.state import SyncStateStore

    store = SyncStateStore(tmp_path / "sync")
    path = store.path_for("http://127.0.0.1:9", "acme/app", "")
    path.parent.mkdir(parents=True, exist_ok=True)
    fifo = make_fifo(path)
    state = bounded(lambda: store.load("http://127.0.0.1:9", "acme/app", ""), fifo)
    assert state.last_synced == {}


# --- repository metadata -------------------------------------------------------------------


def test_git_config_that_is_a_pipe_gives_no_remotes(tmp_path: Path) -> None:
    from workbench.engine.team.repo import remote_urls

    (tmp_path / "repo" / ".git").mkdir(parents=True)
    fifo = make_fifo(tmp_path / "repo" / ".git" / "config")
    assert bounded(lambda: remote_urls(str(tmp_path / "repo")), fifo) == []


def test_dot_git_file_that_is_a_pipe_keeps_the_root(tmp_path: Path) -> None:
    from workbench.engine.claude_paths import resolve_canonical_root

    (tmp_path / "repo").mkdir()
    fifo = make_fifo(tmp_path / "repo" / ".git")
    root = str(tmp_path / "repo")
    assert bounded(lambda: resolve_canonical_root(root), fifo) == root


def test_git_commondir_that_is_oversize_is_not_loaded(tmp_path: Path) -> None:
    from workbench.engine.team.repo import git_dirs

    git = tmp_path / "repo" / ".git"
    git.mkdir(parents=True)
    oversize(git / "commondir", NOTES_LIMIT + 1)
    assert bounded(lambda: git_dirs(str(tmp_path / "repo"))) == (git, git)


# --- other state and user files --------------------------------------------------------------


def test_compaction_summary_search_refuses_a_pipe_transcript(tmp_path: Path) -> None:
    from workbench.engine.context.compaction_log import find_summary

    fifo = make_fifo(tmp_path / "s.jsonl")
    assert bounded(lambda: find_summary(fifo), fifo) is None


def test_compaction_record_that_is_a_pipe_is_skipped(tmp_path: Path) -> None:
    from workbench.engine.context.compaction_log import _load

    fifo = make_fifo(tmp_path / "record.json")
    assert bounded(lambda: _load(fifo), fifo) is None


def test_version_cache_that_is_a_pipe_is_ignored(tmp_path: Path) -> None:
    from workbench.engine.profiles.detect import (
        _MISSING,
        CACHE_FILE,
        VersionRequest,
        VersionResolver,
    )

    resolver = VersionResolver(VersionRequest("auto", "default"), {}, cache_dir=tmp_path)
    fifo = make_fifo(tmp_path / CACHE_FILE)
    assert bounded(lambda: resolver._cached(os.__file__), fifo) is _MISSING


def test_integration_state_that_is_a_pipe_is_ignored(tmp_path: Path) -> None:
    from workbench.live.claude_settings import StateStore

    store = StateStore(tmp_path)
    settings = tmp_path / "settings.json"
    fifo = make_fifo(store._file(settings))
    assert bounded(lambda: store.load(settings), fifo) is None


def test_query_set_that_is_a_pipe_is_one_error(tmp_path: Path) -> None:
    from workbench.engine.errors import UserInputError
    from workbench.engine.recall.evaluation import load_queries

    fifo = make_fifo(tmp_path / "queries.yaml")
    with pytest.raises(UserInputError, match="named pipe"):
        bounded(lambda: load_queries(fifo), fifo)


def test_theme_file_that_is_a_pipe_is_one_error(tmp_path: Path) -> None:
    from workbench.ui.themes import ThemeFileError, ThemeSpec

    fifo = make_fifo(tmp_path / "mine.yaml")
    with pytest.raises(ThemeFileError, match="named pipe"):
        bounded(lambda: ThemeSpec.from_file(fifo), fifo)
