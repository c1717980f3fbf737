"""`ls --json`'s fast path: the plain-dict listing and its kept output say exactly what the
record listing says, on the day it was kept and on every later day, and nothing a file, an
index or the clock does is missed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from secretgen import make_token

from workbench.engine import Engine
from workbench.engine.memories import listing_cache
from workbench.engine.memories import store as store_module
from workbench.engine.memories.finished_listing import DAY_MS
from workbench.engine.memories.frontmatter import render_frontmatter
from workbench.engine.memories.listing_cache import FOLDER, compact_json

NOW_MS = 1_780_000_000_000.0
OLD = 1_770_000_000
SCOPES = ("all", "private", "team", "log")


def _write(path: Path, text: str | bytes, stamp: float = OLD) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    os.utime(path, (stamp, stamp))
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Files whose rows put findings before, after, on both sides of and without the
    `memory-stale` slot, at ages either side of its 30 days, and files it never applies to."""
    root = tmp_path / "memory"
    now_s = NOW_MS / 1000
    _write(root / "MEMORY.md", "- [Plain](plain.md) — indexed\n- [Gone](gone.md) — dangling\n")
    _write(root / "plain.md", "---\nname: plain\ndescription: A plain one\ntype: user\n---\nx\n")
    _write(  # a finding before the slot (no type) and one after (a dangling link)
        root / "both.md",
        "---\ndescription: Findings either side of the stale slot\n---\nSee [[plain]] and [[nobody-by-that-name]].\n",
        stamp=now_s - 29.5 * 86400,  # crosses 30 days half a day later
    )
    _write(root / "before.md", "---\ndescription: no type\n---\nbody\n", stamp=now_s - 3600)
    _write(  # after only: a dangling link
        root / "after.md",
        '---\nname: after\ndescription: "Ünïcode ✓ \\"quoted\\""\ntype: project\n---\n'
        "[[missing-one]]\n",
        stamp=now_s - 31 * 86400 + 60,
    )
    _write(
        root / "nested.md",
        "---\nname: nested\ndescription: Nested type\nmetadata:\n  type: project\n---\n",
    )
    _write(root / "binary.md", b"\x00\x01 binary")
    _write(root / "future.md", "---\ndescription: ahead\ntype: user\n---\n", stamp=now_s + 7200)
    _write(root / "logs" / "2026" / "01" / "day.md", "log line\n")
    token = make_token("github-pat")
    _write(
        root / "team" / "leak.md",
        f"---\ndescription: Team note\ntype: reference\n---\nThe token is {token}\n",
    )
    _write(root / "team" / "fine.md", "---\ndescription: ok\ntype: user\n---\n", stamp=now_s)
    return root


@pytest.fixture(autouse=True)
def trust_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files and indexes written by the test a moment ago may be kept (no racy margin)."""
    monkeypatch.setattr(listing_cache, "RACY_NS", 0)
    monkeypatch.setattr(store_module, "RACY_NS", 0)


def _store(root: Path, tmp_path: Path, now_ms: float = NOW_MS, cache: bool = True):  # type: ignore[no-untyped-def]
    engine = Engine.open(
        tmp_path,
        config_home=str(tmp_path / "cfg"),
        memory_dir=str(root),
        claude_version="2.1.332",
        cache_dir=tmp_path / "cache" if cache else None,
    )
    engine.memories.now_ms = now_ms
    return engine.memories


def _expected(root: Path, tmp_path: Path, scope: str = "all", now_ms: float = NOW_MS) -> bytes:
    """What the record listing says, written as `ls --json` wrote it before the fast path."""
    entries = _store(root, tmp_path, now_ms, cache=False).list(scope)
    text = json.dumps([e.to_json() for e in entries], separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")


def _finished_files(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache" / FOLDER).glob("*.out"))


@pytest.fixture
def no_reading(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Fail the test if the store opens a memory file or loads the records."""

    def refuse(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("the kept listing should have answered")

    def arm() -> None:
        monkeypatch.setattr(store_module, "read_start", refuse)
        monkeypatch.setattr(listing_cache.ListingCache, "load", refuse)

    return arm


@pytest.mark.parametrize("scope", SCOPES)
def test_the_dict_listing_is_the_record_listing(folder: Path, tmp_path: Path, scope: str):
    expected = [e.to_json() for e in _store(folder, tmp_path, cache=False).list(scope)]
    assert _store(folder, tmp_path).listing(scope) == expected  # cold
    assert _store(folder, tmp_path).listing(scope) == expected  # from the records
    rules = {e["path"]: [f["rule"] for f in e["lints"]] for e in expected}
    if scope == "all":  # the rows cover each shape of findings list
        assert rules["both.md"][0] == "type-missing" and "memory-dangling-link" in rules["both.md"]
        assert rules["after.md"][-1] == "memory-dangling-link"
        assert "memory-stale" in rules["plain.md"] and "team-secret" in rules["team/leak.md"]


@pytest.mark.parametrize("scope", SCOPES)
def test_the_kept_output_is_the_listing_and_reads_nothing(
    folder: Path, tmp_path: Path, scope: str, no_reading
):
    expected = _expected(folder, tmp_path, scope)
    assert _store(folder, tmp_path).listing_json(scope) == expected  # cold: keeps it
    assert len(_finished_files(tmp_path)) == 1
    no_reading()
    assert _store(folder, tmp_path).listing_json(scope) == expected


# Ages move on at a different moment for each file; minutes, hours and months later, and a
# clock set back, all must read as a fresh listing would at that moment.
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    later=st.one_of(
        st.floats(min_value=-3 * DAY_MS, max_value=400 * DAY_MS, allow_nan=False),
        st.sampled_from([0.0, 1.0, 0.5 * DAY_MS, 0.5 * DAY_MS - 60_000, 1.5 * DAY_MS, -7200e3]),
    )
)
def test_the_kept_output_follows_the_clock(
    folder: Path, tmp_path: Path, later: float, monkeypatch: pytest.MonkeyPatch
):
    _store(folder, tmp_path).listing_json()  # kept at NOW_MS (or already)
    now = NOW_MS + later
    expected = _expected(folder, tmp_path, now_ms=now)
    with monkeypatch.context() as patched:
        patched.setattr(listing_cache.ListingCache, "load", _refuse)
        assert _store(folder, tmp_path, now).listing_json() == expected


# Values that spell the keys the kept output's spans are found by, with quotes, backslashes
# and braces around them: in the output they sit inside strings, escaped, and fool no search.
_spelled = st.lists(
    st.sampled_from(
        ['"', "\\", ",", ":", "}", "]", "{", "a", " ", "é", "\u2028", "[[plain]]", "[[gone]]"]
        + [',"age_days":', '],"type_format":', ',"line":', ',"abs_path":', ',"lints":[']
        + ["today", "**Why:**", "\n"]
    ),
    max_size=6,
).map("".join)
_named = st.lists(
    st.sampled_from(["a", '"', "\\", ",", ":", "}", "]", ',"abs_path":', ',"line":', "é"]),
    min_size=1,
    max_size=4,
).map("".join)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    files=st.lists(
        st.tuples(
            _named,
            _spelled,
            _spelled,
            st.sampled_from(["user", "feedback", "bogus", None]),
            st.floats(min_value=0, max_value=60 * DAY_MS / 1000),
        ),
        min_size=1,
        max_size=5,
        unique_by=lambda file: file[0],
    ),
    later=st.floats(min_value=-2 * DAY_MS, max_value=60 * DAY_MS),
)
def test_values_that_spell_the_keys_are_kept_and_follow_the_clock(
    tmp_path: Path, files: list[tuple[str, str, str, str | None, float]], later: float
):
    base = tmp_path / str(len(list(tmp_path.iterdir())))
    root = base / "memory"
    for stem, name, body, kind, age_s in files:
        fields = {"name": name, "description": name + body, "type": kind}
        _write(
            root / f"{stem}.md",
            render_frontmatter(fields) + body + "\n",
            stamp=NOW_MS / 1000 - age_s,
        )
    assert _store(root, base).listing_json() == _expected(root, base)
    assert len(_finished_files(base)) == 1  # kept: every row's spans were found
    now = NOW_MS + later
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(listing_cache.ListingCache, "load", _refuse)
        assert _store(root, base, now).listing_json() == _expected(root, base, now_ms=now)


def _refuse(*args, **kwargs):  # type: ignore[no-untyped-def]
    raise AssertionError("the kept listing should have answered")


def _change_content(root: Path) -> None:
    path = root / "plain.md"
    _write(path, path.read_text().replace("A plain one", "A plainer 1"), stamp=OLD + 60)


def _same_stamp_but_rewritten(root: Path) -> None:
    path = root / "plain.md"  # mtime put back: only the ctime tells
    _write(path, path.read_text().replace("A plain one", "Not so good"))


def _add(root: Path) -> None:
    _write(root / "new.md", "---\nname: nobody-by-that-name\ndescription: new\ntype: user\n---\n")


def _remove(root: Path) -> None:
    (root / "after.md").unlink()


def _reindex(root: Path) -> None:
    _write(root / "MEMORY.md", "- [Before](before.md) — now this one\n")


def _unindex(root: Path) -> None:
    (root / "MEMORY.md").unlink()


def _team_index(root: Path) -> None:
    _write(root / "team" / "MEMORY.md", "- [Fine](fine.md) — team\n")


def _rename(root: Path) -> None:
    os.rename(root / "before.md", root / "renamed.md")


@pytest.mark.parametrize(
    "change",
    [
        _change_content,
        _same_stamp_but_rewritten,
        _add,
        _remove,
        _reindex,
        _unindex,
        _team_index,
        _rename,
    ],
)
def test_any_change_to_a_file_or_an_index_is_seen(folder: Path, tmp_path: Path, change):
    for scope in SCOPES:
        _store(folder, tmp_path).listing_json(scope)
    change(folder)
    for scope in SCOPES:
        assert _store(folder, tmp_path).listing_json(scope) == _expected(folder, tmp_path, scope)


def test_nothing_is_kept_while_a_file_is_racily_new(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # Written "a moment ago" under an hour-wide margin, whatever the machine's speed.
    monkeypatch.setattr(listing_cache, "RACY_NS", 3600 * 10**9)
    assert _store(folder, tmp_path).listing_json() == _expected(folder, tmp_path)
    assert _finished_files(tmp_path) == []


def test_nothing_is_kept_while_the_index_is_racily_new(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(store_module, "RACY_NS", 3600 * 10**9)
    assert _store(folder, tmp_path).listing_json() == _expected(folder, tmp_path)
    assert _finished_files(tmp_path) == []


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: b"",
        lambda data: data[: len(data) // 2],
        lambda data: data[:-1],
        lambda data: data + b"x",
        lambda data: b"not json\n" + data.partition(b"\n")[2],
        lambda data: data.replace(b'"rows":', b'"rows":1', 1),
        lambda data: data.replace(b'"fields":8', b'"fields":9', 1),
        lambda data: b"[" * 100_000 + b"\n",
    ],
)
def test_a_damaged_kept_output_is_ignored(folder: Path, tmp_path: Path, damage):
    expected = _expected(folder, tmp_path)
    _store(folder, tmp_path).listing_json()
    (kept,) = _finished_files(tmp_path)
    kept.write_bytes(damage(kept.read_bytes()))
    assert _store(folder, tmp_path).listing_json() == expected
    assert _store(folder, tmp_path).listing_json() == expected


def test_another_release_does_not_use_the_kept_output(folder: Path, tmp_path: Path):
    _store(folder, tmp_path).listing_json()
    engine = Engine.open(
        tmp_path,
        config_home=str(tmp_path / "cfg"),
        memory_dir=str(folder),
        claude_version="2.1.88",  # reads the type at the top level only: other findings
        cache_dir=tmp_path / "cache",
    )
    engine.memories.now_ms = NOW_MS
    older = engine.memories.list()
    expected = json.dumps([e.to_json() for e in older], separators=(",", ":"), ensure_ascii=False)
    assert engine.memories.listing_json() == expected.encode()
    assert any(f.rule == "type-unread" for e in older for f in e.lints)


def test_a_name_only_the_json_module_can_write_is_listed_and_not_kept(tmp_path: Path):
    root = tmp_path / "memory"
    root.mkdir()
    odd = os.fsdecode(b"caf\xe9.md")  # not UTF-8: a lone surrogate in the path
    _write(root / odd, "---\ndescription: odd\ntype: user\n---\n")
    # Elsewhere a character the whole-listing fallback escapes and a piece would not.
    _write(root / "fine.md", "---\ndescription: fine ✓\ntype: user\n---\n")
    out = _store(root, tmp_path).listing_json()
    assert json.loads(out) == json.loads(_expected_ascii(root, tmp_path))
    assert _finished_files(tmp_path) == []
    assert _store(root, tmp_path).listing_json() == out


def _expected_ascii(root: Path, tmp_path: Path) -> bytes:
    entries = _store(root, tmp_path, cache=False).list()
    return json.dumps([e.to_json() for e in entries], separators=(",", ":")).encode()


def test_compact_json_writes_what_the_json_module_writes():
    data = [
        {"a": '\x00\x1f\x7f"\\\b\f\n\r\t', "b": "\u2028\u2029é😀", "c": [1, -2, 3.5, 1e16]},
        {"d": None, "e": True, "f": False, "g": 2**63},
        {"big": 2**70},  # past 64 bits: the json module writes it
    ]
    for value in data:
        expected = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
        assert compact_json(value) == expected
    lone = {"x": "\ud800"}
    assert compact_json(lone) == json.dumps(lone, separators=(",", ":")).encode()


def test_the_facade_answers_from_the_kept_output_without_the_store(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # A day is far from any file's next birthday in this folder: the wall clock is fixed.
    monkeypatch.setattr("time.time", lambda: NOW_MS / 1000)

    def engine() -> Engine:
        return Engine.open(
            tmp_path,
            config_home=str(tmp_path / "cfg"),
            memory_dir=str(folder),
            claude_version="2.1.332",
            cache_dir=tmp_path / "cache",
        )

    expected = _expected(folder, tmp_path)
    first = engine()
    assert first.memory_listing_json() == expected  # a miss: the store lists and keeps it
    assert "memories" in first.__dict__
    second = engine()
    assert second.memory_listing_json() == expected
    assert "memories" not in second.__dict__  # answered from the kept output
    _add(folder)
    third = engine()
    assert third.memory_listing_json() == _expected(folder, tmp_path)
    assert "memories" in third.__dict__


def test_a_memory_folder_that_is_a_link_is_walked(tmp_path: Path):
    real = tmp_path / "elsewhere"
    _write(real / "kept.md", "---\ndescription: kept\ntype: user\n---\n")
    _write(real / "sub" / "deeper.md", "---\ndescription: deeper\ntype: user\n---\n")
    link = tmp_path / "memory"
    link.symlink_to(real, target_is_directory=True)
    paths = {row["path"] for row in _store(link, tmp_path).listing()}
    assert paths == {"kept.md", "sub/deeper.md"}
