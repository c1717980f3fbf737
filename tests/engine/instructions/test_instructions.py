"""The instruction-file walk: sources, order, imports, conditional rules and the lint, on
trees built here (the recorded comparison with the real CLI is in tests/oracle_recorded)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from workbench.engine import Engine
from workbench.engine.instructions.markdown import find_imports, read_frontmatter, split_paths
from workbench.engine.instructions.reading import read_instruction_file


def write(base: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.fixture
def sandbox(tmp_path: Path):
    root = tmp_path / "sb"
    for name in ("home", "config", "managed", "project/.git"):
        (root / name).mkdir(parents=True)

    def engine(cwd: str = "", version: str = "2.1.88", **env: str) -> Engine:
        base = {
            "HOME": str(root / "home"),
            "CLAUDE_CONFIG_DIR": str(root / "config"),
            "WORKBENCH_MANAGED_DIR": str(root / "managed"),
            "WORKBENCH_CLAUDE_COMMAND": "",
            **env,
        }
        return Engine.open(root / "project" / cwd, env=base, claude_version=version)

    return root, engine


def names(report, root: Path) -> list[str]:
    return [f.path.replace(str(root) + "/", "") for f in report.files]


def codes(report) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for finding in report.findings:
        out.setdefault(finding.code, []).append(os.path.basename(finding.path))
    return out


def test_every_source_loads_in_claude_codes_order(sandbox):
    root, engine = sandbox
    write(root / "managed", {"CLAUDE.md": "Managed.\n", ".claude/rules/m.md": "Managed rule.\n"})
    write(root / "config", {"CLAUDE.md": "User.\n", "rules/u.md": "User rule.\n"})
    write(root / "home", {".claude/CLAUDE.md": "Hidden by CLAUDE_CONFIG_DIR.\n"})
    write(root, {"CLAUDE.md": "Above.\n"})
    write(
        root / "project",
        {
            "CLAUDE.md": "Root.\n",
            ".claude/CLAUDE.md": "Dot.\n",
            ".claude/rules/b.md": "B.\n",
            ".claude/rules/a.md": "A.\n",
            "CLAUDE.local.md": "Local.\n",
            "sub/CLAUDE.md": "Sub.\n",
            "sub/deeper/CLAUDE.md": "Below the working folder.\n",
        },
    )
    report = engine("sub").instructions.report()
    assert names(report, root) == [
        "managed/CLAUDE.md",
        "managed/.claude/rules/m.md",
        "config/CLAUDE.md",
        "config/rules/u.md",
        "CLAUDE.md",
        "project/CLAUDE.md",
        "project/.claude/CLAUDE.md",
        "project/.claude/rules/a.md",
        "project/.claude/rules/b.md",
        "project/CLAUDE.local.md",
        "project/sub/CLAUDE.md",
    ]
    kinds = [f.kind for f in report.files]
    assert kinds[:4] == ["managed", "managed", "user", "user"] and kinds[9] == "local"
    assert [f.described_as for f in report.files][:2] == ["user", "user"]  # 2.1.88's words
    newer = engine("sub", version="2.1.332").instructions.report()
    assert [f.described_as for f in newer.files][:2] == ["managed", "managed"]
    assert [n.folder.rsplit("/", 1)[-1] for n in report.nested] == ["deeper"]
    assert "user-file-hidden" in codes(report)
    assert report.total_tokens == sum(f.tokens for f in report.files) > 0


def test_import_chains_stop_after_four_hops(sandbox):
    root, engine = sandbox
    files = {"CLAUDE.md": "Root.\n@docs/c1.md\n"}
    for hop in range(1, 7):
        files[f"docs/c{hop}.md"] = f"Hop {hop}.\n" + (f"@c{hop + 1}.md\n" if hop < 6 else "")
    write(root / "project", files)
    report = engine().instructions.report()
    assert names(report, root) == ["project/CLAUDE.md"] + [
        f"project/docs/c{h}.md" for h in range(1, 5)
    ]
    assert [f.depth for f in report.files] == [0, 1, 2, 3, 4]
    assert report.files[4].parent == str(root / "project/docs/c3.md")
    deep = [f for f in report.findings if f.code == "import-too-deep"]
    assert [os.path.basename(f.path) for f in deep] == ["c5.md"]
    assert deep[0].severity == "error" and deep[0].line == 2


def test_circular_missing_and_skipped_imports(sandbox):
    root, engine = sandbox
    write(
        root / "project",
        {
            "CLAUDE.md": (
                "@a.md\n@nope.md\n@pic.png\n```\n@code.md\n```\n`@span.md`\n"
                "<!-- @comment.md -->\n@~/home.md\nmail dev@example.com\n"
            ),
            "a.md": "A.\n@b.md\n",
            "b.md": "B.\n@a.md\n@b.md\n",
            "pic.png": "x\n",
            "code.md": "x\n",
            "span.md": "x\n",
            "comment.md": "x\n",
        },
    )
    write(root / "home", {"home.md": "Home.\n"})
    report = engine().instructions.report()
    assert names(report, root) == ["project/CLAUDE.md", "project/a.md", "project/b.md"]
    found = codes(report)
    assert found["import-circular"] == ["a.md", "b.md"]
    assert found["import-missing"] == ["nope.md"]
    assert found["import-not-text"] == ["pic.png"]
    assert found["import-outside"] == ["home.md"]
    in_code = [f.message for f in report.findings if f.code == "import-in-code"]
    assert len(in_code) == 3 and any("code block" in m for m in in_code)


def test_external_imports_load_once_approved_and_always_from_user_files(sandbox, tmp_path):
    root, engine = sandbox
    write(root / "home", {"a.md": "From home A.\n", "b.md": "From home B.\n"})
    write(root / "project", {"CLAUDE.md": "Root.\n@~/a.md\n"})
    write(root / "config", {"CLAUDE.md": "User.\n@~/b.md\n"})
    before = engine().instructions.report()
    assert names(before, root) == ["config/CLAUDE.md", "home/b.md", "project/CLAUDE.md"]
    config = {"projects": {str(root / "project"): {"hasClaudeMdExternalIncludesApproved": True}}}
    (root / "config" / ".claude.json").write_text(json.dumps(config), encoding="utf-8")
    after = engine().instructions.report()
    assert names(after, root)[-1] == "home/a.md"


def test_conditional_rules_wait_for_a_matching_read(sandbox):
    root, engine = sandbox
    write(
        root / "project",
        {
            ".claude/rules/py.md": "---\npaths: src/**/*.py\n---\nPython.\n",
            ".claude/rules/rst.md": "---\npaths:\n  - docs/**/*.rst\n---\nDocs.\n",
            ".claude/rules/all.md": '---\npaths: "**"\n---\nAlways.\n',
            "src/app/main.py": "x\n",
            "pkg/CLAUDE.md": "Package.\n",
            "pkg/file.txt": "x\n",
        },
    )
    report = engine().instructions.report(
        reading=[str(root / "project/src/app/main.py"), "pkg/file.txt", "src/app/main.py"]
    )
    assert names(report, root) == ["project/.claude/rules/all.md"]
    rules = {os.path.basename(r.path): r for r in report.conditional}
    assert rules["py.md"].matches == 1 and rules["py.md"].examples == ("src/app/main.py",)
    assert rules["rst.md"].matches == 0
    assert codes(report)["glob-matches-nothing"] == ["rst.md"]
    # Each file attaches once, in the order of the reads.
    assert [f.path.replace(str(root) + "/", "") for f in report.on_read] == [
        "project/.claude/rules/py.md",
        "project/pkg/CLAUDE.md",
    ]
    assert report.on_read[0].trigger == str(root / "project/src/app/main.py")


def test_rules_folder_order_follows_the_release(sandbox):
    root, engine = sandbox
    names_written = ["zeta.md", "alpha.md", "mid.md", "beta.md"]
    for name in names_written:
        write(root / "project", {f".claude/rules/{name}": f"{name}\n"})
    by_name = engine(version="2.1.88").instructions.report()
    assert [os.path.basename(f.path) for f in by_name.files] == sorted(names_written)
    listed = engine(version="2.1.332").instructions.report()
    folder = root / "project" / ".claude" / "rules"
    assert [os.path.basename(f.path) for f in listed.files] == os.listdir(folder)


def test_comments_frontmatter_and_empty_files(sandbox):
    root, engine = sandbox
    write(
        root / "project",
        {
            "CLAUDE.md": "---\ntitle: x\n---\nKept.\n<!-- dropped -->\nAlso kept.\n",
            ".claude/CLAUDE.md": "<!-- only a comment -->\n  \n",
            ".claude/rules/bad.md": "---\npaths: [unclosed\n---\nBad.\n",
            ".claude/rules/notes.txt": "not markdown\n",
        },
    )
    report = engine().instructions.report()
    assert report.files[0].content == "Kept.\nAlso kept."
    found = codes(report)
    assert found["empty-file"] == ["CLAUDE.md"]
    assert found["rule-not-markdown"] == ["notes.txt"]
    # A broken `paths` is quoted and read as one odd glob, as Claude Code does.
    assert [os.path.basename(r.path) for r in report.conditional] == ["bad.md"]


def test_a_fifo_or_a_huge_file_is_refused_without_hanging(sandbox):
    root, engine = sandbox
    os.mkfifo(root / "project" / "CLAUDE.md")
    big = root / "project" / "CLAUDE.local.md"
    big.write_bytes(b"x" * (5 * 1024 * 1024))
    done: list[object] = []
    thread = threading.Thread(target=lambda: done.append(engine().instructions.report()))
    thread.start()
    thread.join(timeout=20)
    assert done, "reading a FIFO must not block"
    report = done[0]
    assert report.files == ()
    unreadable = {
        os.path.basename(f.path): f.message for f in report.findings if f.code == "unreadable"
    }
    assert "pipe" in unreadable["CLAUDE.md"] and "too large" in unreadable["CLAUDE.local.md"]


def test_reading_never_blocks_and_decodes_like_node(tmp_path):
    path = tmp_path / "f.md"
    path.write_bytes(b"ok \xff end")
    assert read_instruction_file(str(path)).text == "ok \ufffd end"
    assert read_instruction_file(str(tmp_path / "none")).missing
    assert read_instruction_file(str(tmp_path)).missing


def test_paths_lists_braces_and_imports_parse_like_claude_code():
    assert split_paths("src/{a,b}/*.py, lib/*.js") == ["src/a/*.py", "src/b/*.py", "lib/*.js"]
    assert split_paths(["x/**", "y"]) == ["x/**", "y"]
    assert read_frontmatter("---\npaths: src/**\n---\nBody").globs == ("src",)
    assert read_frontmatter("---\npaths: **/*.ts\n---\nBody").globs == ("**/*.ts",)
    refs, ignored = find_imports(
        "See @docs/a\\ b.md#part and @./c.md, not x@y.z or @@z or @#x.\n", "/p/CLAUDE.md", "/h"
    )
    assert [r.path for r in refs] == ["/p/docs/a b.md", "/p/c.md,"]
    assert ignored == []


def report_within(engine, seconds: float = 20.0):  # type: ignore[no-untyped-def]
    """The report, read on a thread: a read that blocks fails the test instead of hanging it."""
    done: list[object] = []
    thread = threading.Thread(target=lambda: done.append(engine.instructions.report()))
    thread.daemon = True
    thread.start()
    thread.join(timeout=seconds)
    assert done, "reading the instruction files must not block"
    return done[0]


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_devices_pipes_and_kernel_files_behind_names_and_imports_are_findings(sandbox):
    root, engine = sandbox
    project = root / "project"
    write(project, {"CLAUDE.md": "Root.\n@pipe.md\n@zero.md\n@status.md\n@big.md\n@ok.md\n"})
    write(project, {"ok.md": "Fine.\n"})
    os.mkfifo(project / "pipe.md")
    os.symlink("/dev/zero", project / "zero.md")
    os.symlink("/dev/zero", project / "CLAUDE.local.md")
    # A /proc file says it is regular with size 0 and never needs a writer: only a check on
    # the file system it lives in keeps the walk from reading kernel state as instructions.
    os.symlink("/proc/self/status", project / "status.md")
    (project / "big.md").write_bytes(b"y" * (5 * 1024 * 1024))
    report = report_within(engine())
    assert names(report, root) == ["project/CLAUDE.md", "project/ok.md"]
    problems = {
        os.path.basename(f.path): f.message
        for f in report.findings
        if f.code in ("unreadable", "import-unreadable") or "not loaded" in f.message
    }
    assert "pipe" in problems["pipe.md"].lower()
    assert "device" in problems["zero.md"] and "device" in problems["CLAUDE.local.md"]
    assert "pseudo-file" in problems["status.md"]
    assert "too large" in problems["big.md"]


def test_a_long_import_loop_and_a_self_import_are_findings_not_a_crash(sandbox):
    root, engine = sandbox
    files = {"CLAUDE.md": "@l0.md\n@CLAUDE.md\n"}
    for k in range(40):
        files[f"l{k}.md"] = f"Loop {k}.\n@l{(k + 1) % 40}.md\n@l0.md\n"
    write(root / "project", files)
    report = report_within(engine())
    assert names(report, root) == ["project/CLAUDE.md"] + [f"project/l{k}.md" for k in range(4)]
    found = codes(report)
    assert "CLAUDE.md" in found["import-circular"]
    assert found["import-too-deep"] == ["l4.md"]
