"""The store's between-runs cache of file analyses: same answers as reading every file, and
never trusted for a file that changed, whatever changed about it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from secretgen import make_token

from workbench.engine import Engine
from workbench.engine.memories import listing_cache
from workbench.engine.memories import store as store_module
from workbench.engine.memories.listing_cache import FOLDER

NOW_MS = 1_780_000_000_000.0
OLD = 1_770_000_000  # mtimes in seconds: old enough for memory-stale, fixed for the test


def _write(path: Path, text: str | bytes, stamp: int = OLD) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    os.utime(path, (stamp, stamp))
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A memory folder with a file for each kind of answer a listing gives."""
    root = tmp_path / "memory"
    _write(root / "MEMORY.md", "- [Plain](plain.md) — indexed\n")
    _write(root / "plain.md", "---\nname: Plain\ndescription: A plain one\ntype: user\n---\nx\n")
    _write(
        root / "nested.md",
        "---\nname: nested-one\ndescription: Nested type\nmetadata:\n  type: project\n---\n"
        "Links to [[plain]] and [[nobody-by-that-name]] next week.\n",
    )
    _write(root / "broken.md", "---\ndescription: a\n  b: c\ntype: feedback\n---\nbody\n")
    _write(root / "unclosed.md", "---\ndescription: never closes\n")
    _write(root / "none.md", "just text, café ✓\n", stamp=int(NOW_MS / 1000) - 3600)
    _write(root / "binary.md", b"\x00\x01\x02 binary")
    _write(root / "latin1.md", b"---\ndescription: caf\xe9\ntype: reference\n---\n")
    _write(root / "logs" / "2026" / "01" / "day.md", "log line yesterday\n")
    token = make_token("github-pat")
    _write(
        root / "team" / "leak.md",
        f"---\ndescription: Team note\ntype: reference\n---\nThe token is {token}\n",
    )
    _write(root / "team" / "fine.md", "---\ndescription: Team fine\ntype: user\n---\nok\n")
    return root


def _engine(root: Path, tmp_path: Path, cache: bool = True) -> Engine:
    engine = Engine.open(
        tmp_path,
        config_home=str(tmp_path / "cfg"),
        memory_dir=str(root),
        claude_version="2.1.332",
        cache_dir=tmp_path / "cache" if cache else None,
    )
    engine.memories.now_ms = NOW_MS
    return engine


def _listing(root: Path, tmp_path: Path, cache: bool = True) -> list[dict]:
    return [e.to_json() for e in _engine(root, tmp_path, cache).memories.list()]


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths the store opens to analyse (a cached analysis opens none)."""
    opened: list[str] = []
    real = store_module.read_start

    def counting(path, *args, **kwargs):
        opened.append(os.path.basename(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(store_module, "read_start", counting)
    return opened


@pytest.fixture
def trust_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files written by the test a moment ago may be cached (no racy margin)."""
    monkeypatch.setattr(listing_cache, "RACY_NS", 0)


def test_cached_listing_is_the_uncached_one_and_opens_no_file(
    folder: Path, tmp_path: Path, reads: list[str], trust_now: None
):
    uncached = _listing(folder, tmp_path, cache=False)
    assert _listing(folder, tmp_path) == uncached  # cold: reads, then writes the cache
    assert (tmp_path / "cache" / FOLDER).is_dir()
    reads.clear()
    cached = _listing(folder, tmp_path)  # a new engine: only the cache on disk
    assert reads == []
    assert cached == uncached
    rules = {e["path"]: {f["rule"] for f in e["lints"]} for e in cached}
    # The answers the cache must carry (so the comparison above compares something).
    assert "team-secret" in rules["team/leak.md"]
    assert "memory-dangling-link" in rules["nested.md"]
    assert "memory-stale" in rules["plain.md"] and "memory-stale" not in rules["none.md"]
    assert "frontmatter-invalid-yaml" in rules["broken.md"]
    assert "file-binary" in rules["binary.md"] and "file-not-utf8" in rules["latin1.md"]
    assert {e["path"]: e["type"] for e in cached}["nested.md"] == "project"


def test_memory_stale_follows_today_not_the_day_it_was_cached(
    folder: Path, tmp_path: Path, trust_now: None
):
    _listing(folder, tmp_path)
    engine = _engine(folder, tmp_path)
    engine.memories.now_ms = OLD * 1000 + 86_400_000  # a day after the files were written
    entry = next(e for e in engine.memories.list() if e.path == "plain.md")
    assert entry.age_days == 1 and "memory-stale" not in {f.rule for f in entry.lints}


def _description(root: Path, tmp_path: Path, rel: str) -> str | None:
    return next(e["description"] for e in _listing(root, tmp_path) if e["path"] == rel)


def test_an_edit_of_the_same_size_with_a_new_mtime_is_seen(
    folder: Path, tmp_path: Path, reads: list[str], trust_now: None
):
    _listing(folder, tmp_path)
    path = folder / "plain.md"
    before = path.stat()
    _write(path, path.read_text().replace("A plain one", "A plainer 1"), stamp=OLD + 60)
    assert path.stat().st_size == before.st_size
    reads.clear()
    assert _description(folder, tmp_path, "plain.md") == "A plainer 1"
    assert reads == ["plain.md"]


def test_an_edit_that_puts_the_old_size_and_mtime_back_is_seen(
    folder: Path, tmp_path: Path, trust_now: None
):
    _listing(folder, tmp_path)
    path = folder / "plain.md"
    _write(path, path.read_text().replace("A plain one", "Not so good"))  # mtime set back
    assert _description(folder, tmp_path, "plain.md") == "Not so good"


def test_a_replacement_with_the_same_mtime_but_another_size_or_inode_is_seen(
    folder: Path, tmp_path: Path, reads: list[str], trust_now: None
):
    _listing(folder, tmp_path)
    path = folder / "plain.md"
    longer = path.read_text().replace("A plain one", "A longer description now")
    _write(path, longer)  # same mtime as before, another size
    assert _description(folder, tmp_path, "plain.md") == "A longer description now"
    # Same size and mtime, written elsewhere and renamed over it: another inode.
    same_size = longer.replace("longer", "LONGER")
    inode = path.stat().st_ino
    os.replace(_write(folder / "elsewhere.tmp", same_size), path)
    assert path.stat().st_ino != inode and path.stat().st_mtime == OLD
    reads.clear()
    assert _description(folder, tmp_path, "plain.md") == "A LONGER description now"
    assert reads == ["plain.md"]


def test_a_file_changed_just_before_it_was_read_is_not_cached(
    folder: Path, tmp_path: Path, reads: list[str], monkeypatch: pytest.MonkeyPatch
):
    # No `trust_now`: every file was written a moment ago, within the racy margin, so a
    # second write in the same timestamp tick could look unchanged. None is kept. The margin
    # is widened to an hour, so "a moment ago" holds however slowly a loaded machine runs.
    monkeypatch.setattr(listing_cache, "RACY_NS", 3600 * 10**9)
    first = _listing(folder, tmp_path)
    reads.clear()
    assert _listing(folder, tmp_path) == first
    assert "plain.md" in reads


def _cache_file(tmp_path: Path) -> Path:
    (found,) = (tmp_path / "cache" / FOLDER).glob("*.json")
    return found


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: "",
        lambda text: text[: len(text) // 2],
        lambda text: "[" * 100_000,
        lambda text: "\x00\xff garbage",
        lambda text: json.dumps([1, 2, 3]),
        lambda text: text.replace('"records":{', '"records":{"x":1,', 1),
        # Each record's fields of the wrong type, or a finding that is not one.
        lambda text: text.replace(',"user",', ",7,"),
        lambda text: text.replace("false", '"no"'),
        lambda text: text.replace('"Plain"', '["Plain"]'),
        lambda text: text.replace('"team-secret","error"', '"team-secret","fatal"'),
        lambda text: text.replace('"team-secret"', "null"),
        lambda text: text.replace("[[", "[[1,2],[", 1),
    ],
)
def test_a_damaged_cache_is_ignored(folder: Path, tmp_path: Path, trust_now: None, damage):
    expected = _listing(folder, tmp_path, cache=False)
    _listing(folder, tmp_path)
    cache = _cache_file(tmp_path)
    cache.write_text(damage(cache.read_text(encoding="utf-8")), encoding="utf-8")
    assert _listing(folder, tmp_path) == expected
    assert _listing(folder, tmp_path) == expected  # and what it wrote back is sound


def test_another_release_or_folder_does_not_use_the_cache(
    folder: Path, tmp_path: Path, reads: list[str], trust_now: None
):
    _listing(folder, tmp_path)
    reads.clear()
    engine = Engine.open(
        tmp_path,
        config_home=str(tmp_path / "cfg"),
        memory_dir=str(folder),
        claude_version="2.1.88",  # reads the type at the top level only
        cache_dir=tmp_path / "cache",
    )
    nested = next(e for e in engine.memories.list() if e.path == "nested.md")
    assert "type-unread" in {f.rule for f in nested.lints} and "nested.md" in reads


def test_an_unwritable_cache_folder_changes_nothing(folder: Path, tmp_path: Path):
    (tmp_path / "cache").write_text("a file where the folder would be")
    assert _listing(folder, tmp_path) == _listing(folder, tmp_path, cache=False)


def test_caches_are_kept_for_the_most_recent_folders_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trust_now: None
):
    monkeypatch.setattr(listing_cache, "MAX_FOLDERS", 2)
    for name in ("one", "two", "three"):
        root = tmp_path / name
        _write(root / "a.md", "---\ndescription: a\ntype: user\n---\n")
        _listing(root, tmp_path)
    caches = list((tmp_path / "cache" / FOLDER).iterdir())
    assert len(caches) == 2
    # The newest folder's cache is among those kept: a listing of it opens no file.
    engine = _engine(tmp_path / "three", tmp_path)
    opened: list[str] = []
    real = store_module.read_start
    monkeypatch.setattr(
        store_module, "read_start", lambda path, *a, **k: opened.append(path) or real(path, *a, **k)
    )
    engine.memories.list()
    assert opened == []
