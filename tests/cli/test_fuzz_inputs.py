"""A property fuzz of everything the workbench reads from users, teammates and Claude Code
(issue 10): memory frontmatter, MEMORY.md, transcript lines, settings files and status-line
payloads, each fed to the CLI in-process through `main(argv)`.

Every case runs under `hostile.guarded_case`: a wall-clock deadline, an address-space cap and
a cap on traced allocations. Every run must end without the CLI's "internal error" path,
with each stderr line one workbench message (exactly one when the exit code is 2) and JSON
output that parses. Examples are derandomised, so a run is the same on every machine.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from hostile import (
    alias_bomb,
    assert_messages_are_lines,
    guarded_case,
    link_to_dev_zero,
    make_fifo,
    make_loop,
    make_socket,
    run_main,
)
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from workbench.engine import Engine

FUZZ = settings(
    max_examples=40,
    deadline=None,  # the guard bounds each case instead: timings on a shared machine vary
    derandomize=True,
    database=None,
    # No shrinking: a failing case is reported as found (shrinking CLI runs takes minutes).
    phases=(Phase.explicit, Phase.generate),
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,  # the sandbox is reset by every case
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)

FILE_KINDS = ("regular",) * 6 + ("fifo", "dev-zero", "loop", "socket", "folder")


@dataclass
class Sandbox:
    """One project, config home and memory folder, emptied before each case."""

    base: Path
    project: Path
    home: Path
    memory: Path
    transcripts: Path

    def reset(self) -> None:
        for path in (
            self.memory,
            self.transcripts,
            self.project / ".claude",
            self.home / "settings.json",
            self.base / "flag-settings.json",
        ):
            remove(path)
        self.memory.mkdir(parents=True)
        self.transcripts.mkdir(parents=True)

    def argv(self, *args: str, memory_dir: bool = True) -> list[str]:
        extra = ["--memory-dir", str(self.memory)] if memory_dir else []
        return [*args, "--project", str(self.project), "--config-home", str(self.home), *extra]

    def run(self, *args: str, stdin: bytes | None = None, memory_dir: bool = True):  # type: ignore[no-untyped-def]
        result = run_main(self.argv(*args, memory_dir=memory_dir), stdin=stdin)
        assert_messages_are_lines(result)
        if "--json" in args and result.code in (0, 1):
            json.loads(result.out)
        return result


def remove(path: Path) -> None:
    """Whatever is at `path` (a file, a pipe, a socket, a link, a folder), gone."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def place(path: Path, kind: str, data: bytes) -> None:
    """Put `data` at `path` as a regular file, or put a hostile kind of file there."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "regular":
        path.write_bytes(data)
    elif kind == "fifo":
        make_fifo(path)
    elif kind == "dev-zero":
        link_to_dev_zero(path)
    elif kind == "loop":
        make_loop(path)
    elif kind == "socket":
        make_socket(path)
    else:
        path.mkdir()


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    project = tmp_path / "project"
    project.mkdir()
    home = tmp_path / "claude"
    engine = Engine.open(project, config_home=str(home))
    box = Sandbox(
        tmp_path, project, home, tmp_path / "memory", Path(engine.locations.transcripts_dir)
    )
    box.reset()
    # Warm-up outside the guards: first imports (YAML, Rich, the ranker) are not a case's cost.
    (box.memory / "warm.md").write_text("---\ndescription: '[x]'\ntype: user\n---\nx\n")
    for args in (("lint", "--json"), ("manifest",), ("paths", "--json")):
        box.run(*args)
    box.run("recall", "warm", "--engine", "offline", "--json")
    return box


# --- frontmatter ----------------------------------------------------------------------------

_YAML_BITS = st.sampled_from(
    [
        "plain words",
        "yes",
        "~",
        "1e3",
        "0x1F",
        "2026-03-05",
        '"quoted: colon"',
        "'single'",
        "|",
        ">-",
        "&a anchored",
        "*a",
        "*missing",
        "!!binary aGVsbG8=",
        "!!python/object/apply:os.system ['true']",
        "{a: 1, b: [2, 3]}",
        "[1, [2, [3]]]",
        "? complex",
        "- item",
        "<<: *a",
        "%YAML 1.1",
        "@reserved",
        "`tick`",
        "key: value: more",
        "\t tabbed",
        "\x85 next line",
        "\ud83d\ude00 emoji",
    ]
)


@st.composite
def alias_expansions(draw) -> str:  # type: ignore[no-untyped-def]
    """Anchors built on anchors: flow or block style, any fan-out, aliased from the keys
    Claude Code reads, sometimes referring to themselves."""
    levels = draw(st.integers(2, 10))
    fanout = draw(st.integers(2, 12))
    block = draw(st.booleans())
    lines = ["---", "l0: &l0 [" + ",".join(['"lol"'] * fanout) + "]"]
    for n in range(1, levels):
        if block:
            lines.append(f"l{n}: &l{n}")
            lines += [f"  - *l{n - 1}"] * fanout
        else:
            lines.append(f"l{n}: &l{n} [" + ",".join([f"*l{n - 1}"] * fanout) + "]")
    top = f"*l{levels - 1}"
    for key in draw(st.lists(st.sampled_from(["description", "name", "type", "x"]), max_size=3)):
        lines.append(f"{key}: {top}")
    if draw(st.booleans()):
        lines.append("self: &self [1, *self]")
    lines += ["---", "body"]
    return "\n".join(lines) + "\n"


@st.composite
def frontmatter_files(draw) -> bytes:  # type: ignore[no-untyped-def]
    choice = draw(st.integers(0, 5))
    if choice == 0:
        text = draw(alias_expansions())
    elif choice == 1:
        depth = draw(st.integers(1, 3000))
        opener, closer = draw(st.sampled_from([("[", "]"), ("{a: ", "}"), ("- ", "")]))
        text = f"---\ndescription: {opener * depth}x{closer * depth}\ntype: user\n---\n"
    elif choice == 2:
        keys = st.sampled_from(["name", "description", "type", "metadata", "x", "a b", "-"])
        value = st.one_of(_YAML_BITS, st.text(max_size=60))
        pairs = draw(st.lists(st.tuples(keys, value), max_size=8))
        indent = draw(st.sampled_from(["", "  "]))
        text = "---\n" + "".join(f"{indent}{k}: {v}\n" for k, v in pairs) + "---\nbody\n"
    elif choice == 3:
        long_line = "x" * draw(st.integers(1, 200_000))
        lines_before = draw(st.integers(0, 40))
        text = "---\n" + "k: v\n" * lines_before + f"description: {long_line}\n---\n"
    elif choice == 4:
        text = alias_bomb(draw(st.booleans()))
    else:
        text = draw(st.text(max_size=500))
    data = text.encode("utf-8", errors="surrogatepass")
    if draw(st.booleans()):
        data = data.replace(b"\n", b"\r\n")
    if draw(st.integers(0, 9)) == 0:
        data = b"\xef\xbb\xbf" + data + b"\xff\xfe\x00"
    return data


@FUZZ
@given(data=frontmatter_files(), kind=st.sampled_from(FILE_KINDS))
def test_fuzz_frontmatter(sandbox: Sandbox, data: bytes, kind: str):
    sandbox.reset()
    (sandbox.memory / "steady.md").write_text("---\ndescription: always here\ntype: user\n---\n")
    place(sandbox.memory / "fuzzed.md", kind, data)
    with guarded_case():
        listing = sandbox.run("ls", "--json")
        assert listing.code == 0 and len(listing.out) < 2_000_000
        paths = {entry["path"] for entry in json.loads(listing.out)}
        assert "steady.md" in paths and (("fuzzed.md" in paths) == (kind == "regular"))
        lint = sandbox.run("lint", "--json")
        assert lint.code in (0, 1)
        about = [f for f in json.loads(lint.out)["findings"] if f["path"] == "fuzzed.md"]
        if kind not in ("regular", "folder"):
            assert [f["rule"] for f in about] == ["file-unreadable"]
        show = sandbox.run("show", "fuzzed.md", "--json")
        assert show.code == (0 if kind == "regular" else 2)
        manifest = sandbox.run("manifest")
        assert manifest.code == 0 and "steady.md" in manifest.out


# --- MEMORY.md --------------------------------------------------------------------------------

_INDEX_LINES = st.one_of(
    st.builds(
        lambda title, target, hook: f"- [{title}]({target}) — {hook}",
        st.text(max_size=30),
        st.sampled_from(
            [
                "steady.md",
                "missing.md",
                "team/x.md",
                "../outside.md",
                "/etc/passwd",
                "a%20b.md",
                "%zz.md",
                "x.md#anchor",
                "x.md?q=1",
                "<spaced name.md>",
                "https://example.invalid/x.md",
                "#only-anchor",
                "",
                "steady.md/",
            ]
        ),
        st.text(max_size=80),
    ),
    st.sampled_from(["<!-- open", "-->", "<!-- c -->", "```", "---", "", "   ", "\x00"]),
    st.text(max_size=300),
)


@st.composite
def index_texts(draw) -> bytes:  # type: ignore[no-untyped-def]
    lines = draw(st.lists(_INDEX_LINES, max_size=40))
    repeat = draw(st.sampled_from([1, 1, 1, 50, 300, 3000]))
    text = "\n".join(lines * repeat) if lines else ""
    if draw(st.booleans()):
        text = "---\nname: index\n---\n" + text
    return text.encode("utf-8", errors="surrogatepass")


@FUZZ
@given(data=index_texts(), kind=st.sampled_from(FILE_KINDS))
def test_fuzz_index(sandbox: Sandbox, data: bytes, kind: str):
    sandbox.reset()
    (sandbox.memory / "steady.md").write_text("---\ndescription: always here\ntype: user\n---\n")
    place(sandbox.memory / "MEMORY.md", kind, data)
    with guarded_case():
        index = sandbox.run("index", "--json")
        assert index.code == (0 if kind == "regular" else 2)
        if index.code == 0:
            report = json.loads(index.out)
            assert len(report["entries"]) <= 10_000 and report["loaded_lines"] <= 200
        listing = sandbox.run("ls", "--json")
        assert listing.code == 0 and "steady.md" in listing.out
        lint = sandbox.run("lint", "--json")
        assert lint.code in (0, 1)
        if kind != "regular":
            rules = [
                f["rule"] for f in json.loads(lint.out)["findings"] if f["path"] == "MEMORY.md"
            ]
            assert rules == ["index-unreadable"]


# --- transcript lines -------------------------------------------------------------------------

_ANY_JSON = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=20),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def transcript_lines(draw) -> bytes:  # type: ignore[no-untyped-def]
    kind = draw(st.integers(0, 4))
    if kind == 0:
        usage = draw(
            st.one_of(
                _ANY_JSON,
                st.fixed_dictionaries(
                    {
                        "input_tokens": st.one_of(st.integers(-5, 10**12), _ANY_JSON),
                        "output_tokens": st.one_of(st.integers(-5, 10**9), _ANY_JSON),
                        "cache_read_input_tokens": st.integers(0, 10**7),
                    }
                ),
            )
        )
        entry = {
            "type": draw(st.sampled_from(["user", "assistant", "system", "summary", "x", 7])),
            "uuid": draw(st.one_of(st.uuids().map(str), _ANY_JSON)),
            "parentUuid": draw(st.one_of(st.none(), st.uuids().map(str), _ANY_JSON)),
            "isSidechain": draw(_ANY_JSON),
            "timestamp": draw(st.one_of(st.just("2026-03-05T10:00:00.000Z"), _ANY_JSON)),
            "subtype": draw(st.sampled_from(["compact_boundary", None, "other"])),
            "compactMetadata": draw(_ANY_JSON),
            "message": {
                "id": draw(st.one_of(st.just("msg_1"), _ANY_JSON)),
                "role": draw(st.sampled_from(["user", "assistant"])),
                "model": draw(st.one_of(st.just("claude-sonnet-4-6"), _ANY_JSON)),
                "content": draw(_ANY_JSON),
                "usage": usage,
            },
        }
        return json.dumps(entry, allow_nan=True).encode()
    if kind == 1:
        depth = draw(st.integers(1, 50_000))
        return b'{"type":"user","message":' + b"[" * depth + b"]" * depth + b"}"
    if kind == 2:
        return draw(st.binary(max_size=200))
    if kind == 3:
        return (
            b'{"type":"user","message":{"content":"\\ud800'
            + b"x" * draw(st.integers(0, 9))
            + b'"}}'
        )
    return json.dumps(draw(_ANY_JSON), allow_nan=True).encode()


@FUZZ
@given(
    lines=st.lists(transcript_lines(), max_size=30),
    tail=st.booleans(),
    kind=st.sampled_from(FILE_KINDS),
)
def test_fuzz_transcript_lines(sandbox: Sandbox, lines: list[bytes], tail: bool, kind: str):
    sandbox.reset()
    path = sandbox.transcripts / "44444444-dddd-4ddd-8ddd-444444444444.jsonl"
    place(path, kind, b"\n".join(lines) + (b"" if tail else b"\n"))
    with guarded_case():
        for command in ("gauge", "replay", "compact-preview"):
            result = sandbox.run(command, str(path), "--json")
            assert result.code in ((0, 1, 2) if kind == "regular" else (2,))
        sessions = sandbox.run("transcripts", "--json")
        assert sessions.code == 0
        payload = json.dumps({"transcript_path": str(path)}).encode()
        line = sandbox.run("statusline", stdin=payload)  # a link loop reads as no file yet
        assert line.code in (0, 2)
        if line.code == 0:
            assert len(line.out.splitlines()) == 1


# --- settings files ---------------------------------------------------------------------------


@st.composite
def settings_files(draw, sandbox_dir: str) -> bytes:  # type: ignore[no-untyped-def]
    kind = draw(st.integers(0, 3))
    if kind == 0:
        # Only folders inside the sandbox, or values the resolver must refuse: never a real one.
        folder = st.sampled_from(
            [f"{sandbox_dir}/elsewhere", "~/mem", "rel/dir", "", "~", "~/..", "C:", "//unc/x"]
        )
        body = {
            "autoMemoryDirectory": draw(st.one_of(folder, _ANY_JSON)),
            "autoMemoryEnabled": draw(_ANY_JSON),
            "env": draw(st.one_of(st.dictionaries(st.text(max_size=10), _ANY_JSON), _ANY_JSON)),
        }
        return json.dumps(body, allow_nan=True).encode()
    if kind == 1:
        depth = draw(st.integers(1, 100_000))
        return b'{"env":' + b"[" * depth + b"]" * depth + b"}"
    if kind == 2:
        return draw(st.binary(max_size=300))
    return json.dumps(draw(_ANY_JSON), allow_nan=True).encode()


@FUZZ
@given(
    data=st.data(),
    kind=st.sampled_from(FILE_KINDS),
    where=st.sampled_from(["user", "local", "flag"]),
)
def test_fuzz_settings_files(sandbox: Sandbox, data, kind: str, where: str):  # type: ignore[no-untyped-def]
    sandbox.reset()
    content = data.draw(settings_files(str(sandbox.base)))
    target = {
        "user": sandbox.home / "settings.json",
        "local": sandbox.project / ".claude" / "settings.local.json",
        "flag": sandbox.base / "flag-settings.json",
    }[where]
    place(target, kind, content)
    flag = ("--settings", str(target)) if where == "flag" else ()
    with guarded_case():
        for command in (("paths", "--json"), ("ls", "--json")):
            result = sandbox.run(*flag, *command, memory_dir=False)
            if where != "flag":
                assert result.code == 0  # a broken settings file on disk is reported, not fatal


# --- status-line payloads ---------------------------------------------------------------------


@st.composite
def statusline_payloads(draw, transcript: str) -> bytes:  # type: ignore[no-untyped-def]
    kind = draw(st.integers(0, 4))
    if kind == 0:
        body = {
            "transcript_path": draw(
                st.one_of(
                    st.sampled_from([transcript, "/dev/zero", "/", "", "/nonexistent/x.jsonl"]),
                    _ANY_JSON,
                )
            ),
            "model": draw(st.one_of(st.fixed_dictionaries({"id": _ANY_JSON}), _ANY_JSON)),
            "session_id": draw(_ANY_JSON),
        }
        return json.dumps(body, allow_nan=True).encode()
    if kind == 1:
        depth = draw(st.integers(1, 100_000))
        return b'{"transcript_path":' + b'{"a":' * depth + b"1" + b"}" * depth + b"}"
    if kind == 2:
        return draw(st.binary(max_size=300))
    if kind == 3:
        return b'{"transcript_path": "' + b"x" * draw(st.integers(0, 2_000_000)) + b'"}'
    return json.dumps(draw(_ANY_JSON), allow_nan=True).encode()


@FUZZ
@given(data=st.data())
def test_fuzz_statusline_payloads(sandbox: Sandbox, data):  # type: ignore[no-untyped-def]
    transcript = sandbox.base / "live.jsonl"
    if not transcript.exists():
        transcript.write_text(
            json.dumps({"type": "user", "uuid": "u1", "message": {"content": "hi"}}) + "\n"
        )
    payload = data.draw(statusline_payloads(str(transcript)))
    with guarded_case():
        result = sandbox.run("statusline", stdin=payload)
        assert result.code in (0, 2)
        if result.code == 0:
            assert len(result.out.splitlines()) == 1


def test_fuzz_guard_catches_a_hang(sandbox: Sandbox):
    """The guard itself works: a read of a FIFO that waits for a writer is cut off."""
    from hostile import CaseTimeout

    fifo = make_fifo(sandbox.base / "wait.fifo")
    with pytest.raises(CaseTimeout), guarded_case(deadline=1.0):
        with open(fifo, "rb"):
            pass
    assert os.path.exists(fifo)
