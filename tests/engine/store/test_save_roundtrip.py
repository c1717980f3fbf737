"""Whatever `save` writes reads back identically: through the store, through Claude Code's own
scan (first 30 lines, the same fence regex), and as valid YAML."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.engine import Engine
from workbench.engine.memories.file_format import kebab_name
from workbench.engine.memories.frontmatter import FRONTMATTER_RE, MEMORY_TYPES, _load_yaml
from workbench.engine.memories.scan import MemoryScanner

YAML_WORDS = [
    "yes", "no", "on", "off", "null", "~", "true", "False", "1.0", "0x1f", "2026-03-05",
    ".inf", "-", "---", "...", "?", "&anchor", "*alias", "!tag", "%", "@", "`", "#", "|", ">",
]  # fmt: skip
PIECES = st.one_of(
    st.sampled_from(YAML_WORDS),
    st.sampled_from(['"', "'", ":", ": ", " #", "[/]", "[n0]", "{", "}", "\\", "\t", "---"]),
    st.characters(codec="utf-8", exclude_characters="\n\r"),
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x1F), max_size=3).filter(
        lambda t: "\n" not in t and "\r" not in t
    ),
    st.sampled_from(["\x85", "\u2028", "\u2029", "\ufeff", "\x7f", "\ufffe", "é", "日本", "🙂"]),
)
ONE_LINE = st.lists(PIECES, min_size=1, max_size=8).map("".join).filter(lambda s: s.strip())
BODY = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\r\0"), max_size=200)


@pytest.fixture(scope="module")
def store_factory():
    made: list[str] = []

    def make(claude_version: str | None = None):
        base = Path(tempfile.mkdtemp(prefix="wb-roundtrip-"))
        made.append(str(base))
        (base / "project").mkdir()
        (base / "memory").mkdir()
        engine = Engine.open(
            base / "project", memory_dir=str(base / "memory"), claude_version=claude_version
        )
        return engine.memories

    yield make
    for folder in made:
        shutil.rmtree(folder, ignore_errors=True)


def written_frontmatter(release: str, name: str, description: str, memory_type: str) -> dict:
    """What a new memory's frontmatter holds in each release's format (spec 08: the current
    release writes a kebab-case name and nests the type under `metadata`)."""
    if release == "2.1.88":
        return {"name": name, "description": description, "type": memory_type}
    return {"name": kebab_name(name), "description": description, "metadata": {"type": memory_type}}


@pytest.mark.parametrize("release", ["2.1.88", "2.1.332"])
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=ONE_LINE, description=ONE_LINE, memory_type=st.sampled_from(MEMORY_TYPES), body=BODY)
def test_save_reads_back_identically(store_factory, release, name, description, memory_type, body):
    store = store_factory(release)
    result = store.save(
        type=memory_type, name=name, description=description, body=body, index=False
    )
    doc = store.read(result.path)
    assert doc.frontmatter == written_frontmatter(release, name, description, memory_type)
    assert doc.frontmatter_error is None and doc.visible_to_claude
    assert doc.entry.description == description and doc.entry.type == memory_type
    # The body as saved: whitespace it starts with is dropped (the closing fence's `---\\s*`
    # would swallow it), trailing newlines too.
    assert doc.body.strip("\n") == body.lstrip().rstrip("\n")
    assert not {f.rule for f in doc.entry.lints} & {
        "frontmatter-invalid-yaml",
        "frontmatter-unclosed",
        "type-missing",
        "description-missing",
    }
    # Claude Code's side: the fence regex on the first 30 lines, then YAML.
    head = "\n".join(doc.text.split("\n")[:30])
    block = FRONTMATTER_RE.match(head)
    assert block is not None
    assert _load_yaml(block.group(1)) == doc.frontmatter
    (header,) = MemoryScanner(store.root).scan()
    assert (header.description, header.type) == (description, memory_type)


@pytest.mark.parametrize(
    "description",
    ["use --- between sections", "a ---- b", "bell \x07 and nul \x00"],
)
def test_reported_descriptions_read_back(store_factory, description):
    store = store_factory()
    result = store.save(type="feedback", name="n", description=description, body="b")
    assert store.read(result.path).frontmatter["description"] == description
    assert store.read(result.path).entry.type == "feedback"
    index = store.index()  # the index line stays plain text
    assert [e.target for e in index.entries] == [result.path]
    assert "\x00" not in index.loaded_content and "\x07" not in index.loaded_content


@pytest.mark.parametrize("bad", ["two\nlines", "carriage\rreturn", "lone \udc80 surrogate"])
def test_names_and_descriptions_must_be_one_line_of_text(store_factory, bad):
    from workbench.engine.errors import UserInputError

    store = store_factory()
    with pytest.raises(UserInputError):
        store.save(type="user", name="n", description=bad, body="b")
    with pytest.raises(UserInputError):
        store.save(type="user", name=bad, description="d", body="b")
    assert list(store.root.iterdir()) == []
