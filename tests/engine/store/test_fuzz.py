"""Property-based fuzzing: malformed frontmatter, index text and file bytes never crash."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.engine.jsutil import js_len
from workbench.engine.memories.frontmatter import parse_frontmatter, split_document
from workbench.engine.memories.index import (
    MAX_ENTRYPOINT_LENGTH,
    MAX_ENTRYPOINT_LINES,
    js_trim,
    parse_index_line,
    strip_for_loading,
    truncate_entrypoint,
)
from workbench.engine.memories.lint import FileFacts, lint_file

_fm_text = st.one_of(
    st.text(max_size=400),
    st.builds(
        lambda body, tail: f"---\n{body}\n---\n{tail}", st.text(max_size=200), st.text(max_size=50)
    ),
    st.builds(
        lambda pairs: "---\n" + "\n".join(f"{k}: {v}" for k, v in pairs) + "\n---\n",
        st.lists(
            st.tuples(st.sampled_from(["name", "description", "type", "x"]), st.text(max_size=30)),
            max_size=6,
        ),
    ),
)


@settings(max_examples=1500, suppress_health_check=[HealthCheck.too_slow])
@given(_fm_text)
def test_frontmatter_never_raises(text: str):
    parsed = parse_frontmatter(text)
    assert isinstance(parsed.data, dict)
    _, body = split_document(text)
    assert isinstance(body, str)


@st.composite
def _index_text(draw):
    line = st.one_of(
        st.text(max_size=300),
        st.builds(
            lambda t, f, h: f"- [{t}]({f}) — {h}",
            st.text(max_size=40),
            st.text(max_size=40),
            st.text(max_size=200),
        ),
        st.text(alphabet="😀é x\n", max_size=500),
    )
    return "\n".join(draw(st.lists(line, max_size=260)))


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_index_text())
def test_truncation_invariants(text: str):
    result = truncate_entrypoint(strip_for_loading(text))
    trimmed = js_trim(strip_for_loading(text))
    assert js_len(result.content) <= MAX_ENTRYPOINT_LENGTH
    assert len(result.content.split("\n")) <= MAX_ENTRYPOINT_LINES
    assert result.line_truncated == (len(trimmed.split("\n")) > MAX_ENTRYPOINT_LINES)
    assert result.length_truncated == (js_len(trimmed) > MAX_ENTRYPOINT_LENGTH)
    if not result.truncated:
        assert result.content == trimmed
    elif "\ufffd" not in result.content[-1:]:
        assert trimmed.startswith(result.content)
    assert 0 <= result.kept_lines <= min(MAX_ENTRYPOINT_LINES, result.line_count)
    for line in text.split("\n")[:20]:
        parse_index_line(line)


@settings(max_examples=1500, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=600), st.integers(min_value=0, max_value=5000), st.booleans())
def test_lint_handles_any_bytes(data: bytes, age: int, team: bool):
    binary = b"\0" in data
    try:
        text, not_utf8 = data.decode("utf-8"), False
    except UnicodeDecodeError:
        text, not_utf8 = data.decode("utf-8", errors="replace"), True
    findings = lint_file(
        FileFacts("x.md", text, len(data), age, team, binary=binary, not_utf8=not_utf8)
    )
    assert all(f.severity in ("error", "warning", "info") for f in findings)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.from_regex(r"[a-z]{1,8}(/[a-z]{1,6})?", fullmatch=True), st.binary(max_size=400)
        ),
        min_size=1,
        max_size=6,
    ),
    st.binary(max_size=800),
)
def test_store_survives_arbitrary_folders(files: list[tuple[str, bytes]], index_bytes: bytes):
    import tempfile
    from pathlib import Path

    from workbench.engine import Engine

    with tempfile.TemporaryDirectory() as tmp:
        memory = Path(tmp) / "memory"
        for name, data in files:
            path = memory / f"{name}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        (memory / "MEMORY.md").write_bytes(index_bytes)
        (Path(tmp) / "project").mkdir()
        engine = Engine.open(
            Path(tmp) / "project", memory_dir=str(memory), config_home=str(Path(tmp) / "cfg")
        )
        store = engine.memories
        entries = store.list()
        assert len(entries) == len({name for name, _ in files})
        store.lint()
        store.index()
        store.manifest()
        for entry in entries:
            store.read(entry.path)
