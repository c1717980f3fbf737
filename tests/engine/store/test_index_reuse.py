"""`MemoryStore.read` reuses the parsed MEMORY.md links while the index is unchanged, and sees
every change: a same-size rewrite, an mtime put back, a replace by rename, a deletion, a new
team index and the store's own writes; a recently changed index is parsed again."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from workbench.engine.memories import store as store_module
from workbench.engine.memories.store import MemoryStore

LINK_A = "- [Alpha](alpha.md) — the first\n"
LINK_B = "- [Bravo](bravo.md) — the first\n"  # the same size as LINK_A
assert len(LINK_A) == len(LINK_B)


def _memory(name: str) -> str:
    return f"---\nname: {name}\ndescription: {name} for the test\ntype: user\n---\n\nbody\n"


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    from workbench.engine import Engine

    (tmp_path / "proj" / ".git").mkdir(parents=True)
    engine = Engine.open(tmp_path / "proj", config_home=str(tmp_path / "cfg"))
    memories = engine.memories
    memories.root.mkdir(parents=True)
    (memories.root / "alpha.md").write_text(_memory("Alpha"), encoding="utf-8")
    (memories.root / "bravo.md").write_text(_memory("Bravo"), encoding="utf-8")
    memories.index_path().write_text(LINK_A, encoding="utf-8")
    return memories


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """One item per read of an index file the store makes (the parse follows each read)."""
    calls: list[bool] = []
    original = MemoryStore._read_index

    def counting(self: MemoryStore, team: bool) -> tuple[bytes | None, str]:
        calls.append(team)
        return original(self, team)

    monkeypatch.setattr(MemoryStore, "_read_index", counting)
    return calls


@pytest.fixture
def trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    """A clock an hour ahead, so an index written by the test counts as safely old."""
    monkeypatch.setattr(
        store_module, "_now_ns", lambda: time.time_ns() + 3600 * 10**9, raising=False
    )


def _indexed(store: MemoryStore) -> dict[str, bool]:
    return {name: store.read(name).entry.indexed for name in ("alpha.md", "bravo.md")}


def _next_tick(path: Path, probe: Path) -> None:
    """Wait until a write gets a later ctime than `path` has (the filesystem's tick)."""
    before = os.stat(path).st_ctime_ns
    deadline = time.monotonic() + 10
    while True:
        probe.write_bytes(b"x")
        if os.stat(probe).st_ctime_ns > before:
            return
        assert time.monotonic() < deadline, "the filesystem's ctime did not move"
        time.sleep(0.002)


def test_a_read_after_an_unchanged_index_does_not_parse_it_again(store, parses, trusted):
    assert _indexed(store) == {"alpha.md": True, "bravo.md": False}
    assert parses, "the first read parses the index"
    parses.clear()
    for _ in range(3):
        assert _indexed(store) == {"alpha.md": True, "bravo.md": False}
    assert parses == []
    store.list()  # the listing asks the same question
    assert parses == []


def test_a_recently_changed_index_is_parsed_again(store, parses, monkeypatch):
    # The real clock: the index was just written, so its stamp could hide a second write.
    # The margin is widened to an hour, so "just written" holds on a slow, loaded machine.
    monkeypatch.setattr(store_module, "RACY_NS", 3600 * 10**9)
    assert _indexed(store) == {"alpha.md": True, "bravo.md": False}
    parses.clear()
    assert _indexed(store) == {"alpha.md": True, "bravo.md": False}
    assert parses, "a parse of an index changed moments ago must not be reused"


def _rewrite_same_size(store: MemoryStore) -> None:
    store.index_path().write_text(LINK_B, encoding="utf-8")


def _rewrite_with_mtime_put_back(store: MemoryStore) -> None:
    index = store.index_path()
    old = os.stat(index)
    index.write_text(LINK_B, encoding="utf-8")
    os.utime(index, ns=(old.st_atime_ns, old.st_mtime_ns))
    assert os.stat(index).st_mtime_ns == old.st_mtime_ns


def _replace_by_rename(store: MemoryStore) -> None:
    index = store.index_path()
    old = os.stat(index)
    spare = index.with_name("MEMORY.md.new")
    spare.write_text(LINK_B, encoding="utf-8")
    os.utime(spare, ns=(old.st_atime_ns, old.st_mtime_ns))
    os.replace(spare, index)


def _delete(store: MemoryStore) -> None:
    store.index_path().unlink()


def _team_index_appears(store: MemoryStore) -> None:
    team = store.index_path(team=True)
    team.parent.mkdir()
    team.write_text("- [Bravo](../bravo.md) — from the team index\n", encoding="utf-8")


def _store_writes_the_index(store: MemoryStore) -> None:
    store.write_index(LINK_B)


def _store_saves_a_memory(store: MemoryStore) -> None:
    store.save(
        type="user",
        name="Bravo",
        description="Bravo for the test",
        body="b",
        file="bravo.md",
        replace=True,
    )


CHANGES = {
    "same-size rewrite": (_rewrite_same_size, {"alpha.md": False, "bravo.md": True}),
    "mtime put back": (_rewrite_with_mtime_put_back, {"alpha.md": False, "bravo.md": True}),
    "replace by rename": (_replace_by_rename, {"alpha.md": False, "bravo.md": True}),
    "deletion": (_delete, {"alpha.md": False, "bravo.md": False}),
    "team index appears": (_team_index_appears, {"alpha.md": True, "bravo.md": True}),
    "store writes the index": (_store_writes_the_index, {"alpha.md": False, "bravo.md": True}),
    "store saves a memory": (_store_saves_a_memory, {"alpha.md": True, "bravo.md": True}),
}


@pytest.mark.parametrize("change", list(CHANGES), ids=list(CHANGES))
def test_each_change_to_the_index_is_seen_by_the_next_read(store, trusted, tmp_path, change):
    apply, expected = CHANGES[change]
    assert _indexed(store) == {"alpha.md": True, "bravo.md": False}
    _next_tick(store.index_path(), tmp_path / "probe")
    apply(store)
    assert _indexed(store) == expected


def test_the_stores_own_write_is_seen_even_when_the_stamp_looks_unchanged(
    store, trusted, monkeypatch
):
    # A stamp that never moves (a filesystem whose timestamps did not tick): only the
    # store's own record of its write can tell the parse is out of date.
    monkeypatch.setattr(MemoryStore, "_index_stamp", lambda self, team: None, raising=False)
    assert _indexed(store) == {"alpha.md": True, "bravo.md": False}
    store.write_index(LINK_B)
    assert _indexed(store) == {"alpha.md": False, "bravo.md": True}
    store.fix_index_orphans()  # an index fix links alpha.md again
    assert _indexed(store) == {"alpha.md": True, "bravo.md": True}


def test_reads_from_threads_agree_while_the_index_changes(store, trusted, tmp_path):
    # Every rewrite keeps alpha.md linked and bravo.md, once linked, stays linked: a thread
    # that sees bravo.md indexed and then not was given a parse older than one it had.
    index = store.index_path()
    seen: list[list[dict[str, bool]]] = [[] for _ in range(4)]
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader(answers: list[dict[str, bool]]) -> None:
        try:
            while not stop.is_set():
                answers.append(_indexed(store))
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    threads = [threading.Thread(target=reader, args=(answers,)) for answers in seen]
    for thread in threads:
        thread.start()
    try:
        for text in (LINK_A + "\n", LINK_A + "\n\n", LINK_A + LINK_B, LINK_B + LINK_A):
            _next_tick(index, tmp_path / "probe")
            spare = index.with_name("MEMORY.md.new")
            spare.write_text(text, encoding="utf-8")
            os.replace(spare, index)
            time.sleep(0.05)
    finally:
        stop.set()
        for thread in threads:
            thread.join(10)
    assert errors == []
    for answers in seen:
        assert answers and all(answer["alpha.md"] for answer in answers)
        bravo = [answer["bravo.md"] for answer in answers]
        assert bravo == sorted(bravo), "bravo.md went from indexed back to not indexed"
    # Once the writes are done, every thread sees the last index.
    finals: list[dict[str, bool]] = []
    late = [threading.Thread(target=lambda: finals.append(_indexed(store))) for _ in range(4)]
    for thread in late:
        thread.start()
    for thread in late:
        thread.join(10)
    assert finals == [{"alpha.md": True, "bravo.md": True}] * 4
