"""The instruction files Claude Code loads (CLAUDE.md sources, rules, imports), against
`workbench instructions`.

Each case is a tree of our own files: managed, user, project, local, rules with and without
`paths` globs, import chains, circular and missing imports. Claude Code sends what it loaded
in the first request's context reminder (`Contents of <path> (<description>):`), and what a
Read attaches in the next request; both are cut out of the recorded requests and compared,
file by file and in order, with what the workbench says for the same tree. Descriptions are
Claude Code's words, so only which files share one is kept.

Managed files live in a system folder: the run gets a private mount namespace with an
overlay on /etc (root only), so nothing outside the run ever sees them. Without that the
case runs without managed files and says so.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oracle import extract, runner
from oracle.checks.base import AGREE, DIFFER, ERROR, Case, Check, Outcome, scrub, tail
from oracle.checks.memory_md import memory_dir_rel
from oracle.releases import Release
from tests.fakes.messages_api import RecordedRequest, ScriptedReply

MANAGED = "/etc/claude-code"
"""Where Claude Code reads managed files on Linux."""
SANDBOX = "{sandbox}"
_ATTACHED = re.compile(r"Contents of (?P<path>/[^\n]*?)(?: \((?P<label>[^\n]*)\))?:\n\n")


@dataclass(frozen=True)
class Tree:
    """One instruction tree: files by place, where Claude Code runs, what it reads."""

    project: dict[str, str] = field(default_factory=dict)
    config: dict[str, str] = field(default_factory=dict)
    """Under CLAUDE_CONFIG_DIR."""
    sandbox: dict[str, str] = field(default_factory=dict)
    """Anywhere in the sandbox (`home/...` is HOME)."""
    managed: dict[str, str] = field(default_factory=dict)
    """Under the managed folder."""
    memory: str | None = None
    """A MEMORY.md for the project's auto memory."""
    cwd: str = ""
    reads: tuple[str, ...] = ()
    """Project files the first answer asks Claude Code to Read."""


def _chain(prefix: str, hops: int) -> dict[str, str]:
    """`docs/<prefix>1.md` … each importing the next by a path relative to itself."""
    out = {}
    for i in range(1, hops + 1):
        text = f"{prefix.upper()} chain, hop {i} of {hops}.\n"
        if i < hops:
            text += f"@{prefix}{i + 1}.md\n"
        out[f"docs/{prefix}{i}.md"] = text
    return out


def trees() -> dict[str, tuple[str, Tree]]:
    """name → (what it covers, the tree)."""
    rules = {
        ".claude/rules/zeta.md": "Zeta rule: always loaded.\n",
        ".claude/rules/alpha.md": "Alpha rule: always loaded.\n",
        ".claude/rules/sub/nested.md": "A rule in a subfolder of the rules folder.\n",
        ".claude/rules/match-all.md": '---\npaths: "**"\n---\nA rule whose glob matches all.\n',
        ".claude/rules/empty-paths.md": '---\npaths: ""\n---\nA rule with empty paths.\n',
        ".claude/rules/python.md": "---\npaths: src/**/*.py\n---\nPython sources rule.\n",
        ".claude/rules/rst.md": "---\npaths:\n  - docs/**/*.rst\n---\nNo such docs rule.\n",
        ".claude/rules/notes.txt": "Not markdown, never loaded.\n",
    }
    sources = Tree(
        project={
            "CLAUDE.md": "Project root instructions.\n@docs/root-import.md\n",
            "docs/root-import.md": "Imported from the root, outside the working folder.\n",
            ".claude/CLAUDE.md": "Project instructions in the dot folder.\n",
            "CLAUDE.local.md": "Local, not checked in.\n",
            **rules,
            "src/app/main.py": "print('main')\n",
            "pkg/CLAUDE.md": "Package instructions.\n<!-- a comment that is removed -->\nKept.\n",
            "pkg/.claude/CLAUDE.md": "  \n\n",
            "pkg/.claude/rules/pkg.md": "Package rule.\n",
            "pkg/app/CLAUDE.md": "---\ntitle: app\n---\nWorking folder instructions.\n@notes/app.md\n",
            "pkg/app/notes/app.md": "Imported inside the working folder.\n",
            "pkg/app/CLAUDE.local.md": "Local instructions of the working folder.\n",
            "pkg/app/deep/CLAUDE.md": "Below the working folder: waits for a read.\n",
        },
        config={
            "CLAUDE.md": "User instructions for all projects.\n",
            "rules/user.md": "User rule.\n",
            "rules/user-src.md": "---\npaths: src/**\n---\nUser rule for sources.\n",
        },
        sandbox={
            "home/.claude/CLAUDE.md": "A HOME file that CLAUDE_CONFIG_DIR hides.\n",
            "CLAUDE.md": "Above the repository.\n",
        },
        managed={
            "CLAUDE.md": "Managed policy instructions.\n",
            ".claude/rules/managed.md": "Managed rule.\n",
            "rules/ignored.md": "Managed rules outside .claude are not read.\n",
        },
        memory="- [Build notes](build.md) — how the build is cached\n",
        cwd="pkg/app",
    )
    imports = Tree(
        project={
            "CLAUDE.md": (
                "Root file with imports.\n"
                "@docs/four1.md\n@docs/five1.md\n@docs/six1.md\n"
                "@docs/missing.md\n@docs/loop-a.md\n@./docs/dot-slash.md\n"
                "```\n@docs/in-code-block.md\n```\n"
                "Inline `@docs/in-code-span.md` stays text.\n"
                "<!-- @docs/in-comment.md -->\n"
                "@docs/anchored.md#section\n@assets/picture.png\n@docs\n"
                "@~/outside-home.md\nWrite to dev@example.com for help.\n"
            ),
            **_chain("four", 4),
            **_chain("five", 5),
            **_chain("six", 6),
            "docs/loop-a.md": "Loop A imports loop B.\n@loop-b.md\n",
            "docs/loop-b.md": "Loop B imports loop A and itself.\n@loop-a.md\n@loop-b.md\n",
            "docs/dot-slash.md": "Imported with a ./ prefix.\n",
            "docs/in-code-block.md": "Never loaded.\n",
            "docs/in-code-span.md": "Never loaded.\n",
            "docs/in-comment.md": "Never loaded.\n",
            "docs/anchored.md": "Imported with an anchor.\n",
            "assets/picture.png": "not a picture, but named like one\n",
            ".claude/rules/importing.md": "A rule that imports.\n@../../docs/from-rule.md\n",
            "docs/from-rule.md": "Imported by a rule.\n",
            "CLAUDE.local.md": "@docs/four1.md\nLocal file importing a loaded file.\n",
        },
        config={"CLAUDE.md": "User file.\n@~/user-import.md\n"},
        sandbox={
            "home/user-import.md": "Imported by the user file from HOME.\n",
            "home/outside-home.md": "Imported by the project from HOME: outside.\n",
        },
    )
    on_read = Tree(
        project={
            "CLAUDE.md": "Project root.\n",
            ".claude/rules/python.md": "---\npaths: src/**/*.py\n---\nPython sources rule.\n",
            ".claude/rules/brace.md": '---\npaths: "lib/{a,b}/*.js, tools/*.sh"\n---\nBraces.\n',
            ".claude/rules/rst.md": "---\npaths:\n  - docs/**/*.rst\n---\nNo such docs rule.\n",
            "src/app/main.py": "print('main')\n",
            "lib/b/util.js": "export {}\n",
            "pkg/CLAUDE.md": "Package file, loads on a read below it.\n",
            "pkg/.claude/rules/pkg.md": "Package rule.\n",
            "pkg/.claude/rules/pkg-txt.md": '---\npaths: "**/*.txt"\n---\nText files here.\n',
            "pkg/app/CLAUDE.md": "App file.\n@extra.md\n",
            "pkg/app/extra.md": "Imported by the app file.\n",
            "pkg/app/deep/CLAUDE.md": "Deep file.\n",
            "pkg/app/deep/file.txt": "deep\n",
        },
        config={"rules/user-src.md": "---\npaths: src/**\n---\nUser rule for sources.\n"},
        reads=("src/app/main.py", "lib/b/util.js", "pkg/app/deep/file.txt"),
    )
    return {
        "sources": (
            "every source, from the managed file to a folder below the working one",
            sources,
        ),
        "imports": (
            "import chains of 4, 5 and 6 hops, a loop, missing and skipped imports",
            imports,
        ),
        "on-read": ("conditional rules and nested files when Claude Code reads files", on_read),
    }


def _cases() -> list[Case]:
    return [Case(name, title, {"tree": name}) for name, (title, _tree) in trees().items()]


# --- setting a tree up ---------------------------------------------------------------------


def can_overlay() -> bool:
    """Managed files need a private mount namespace (root, `unshare`, overlayfs)."""
    return os.geteuid() == 0 and shutil.which("unshare") is not None


def with_managed(release: Release, root: Path) -> Release:
    """The release run with `<root>/etc-upper` laid over /etc, for that process alone."""
    upper, work = root / "etc-upper", root / "etc-work"
    work.mkdir(parents=True, exist_ok=True)
    script = (
        f"mount -t overlay overlay -o lowerdir=/etc,upperdir={upper},workdir={work} /etc "
        '&& exec "$@"'
    )
    argv = ("unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh")
    return Release(release.version, release.folder, (*argv, *release.argv))


def managed_local(root: Path) -> Path:
    """Where a tree's managed files are written in the sandbox (the overlay's upper layer)."""
    return root / "etc-upper" / "claude-code"


def scenario_for(tree: Tree, responder: Any = None) -> runner.Scenario:
    sandbox = dict(tree.sandbox)
    for rel, text in tree.managed.items():
        sandbox[f"etc-upper/claude-code/{rel}"] = text
    return runner.Scenario(
        prompt="hello",
        git=True,
        cwd=tree.cwd,
        project_files=dict(tree.project),
        config_files=dict(tree.config),
        sandbox_files=sandbox,
        responder=responder,
        timeout=150,
    )


def _reader(box_project: Path, reads: tuple[str, ...]) -> Any:
    asked = {"done": False}

    def respond(request: RecordedRequest) -> ScriptedReply | None:
        if not runner.is_main_thread(request):
            return None
        if reads and not asked["done"]:
            asked["done"] = True
            return ScriptedReply.tool_use(
                [("Read", {"file_path": str(box_project / r)}) for r in reads]
            )
        return ScriptedReply.text("Done.")

    return respond


def listings(root: Path) -> dict[str, list[str]]:
    """Every rules folder under `root` as the file system lists it (unsorted), keyed by its
    path with the root as `<sandbox>`."""
    out: dict[str, list[str]] = {}
    for folder, dirnames, _files in os.walk(root):
        if os.path.basename(folder) == "rules" and os.path.basename(os.path.dirname(folder)) in (
            ".claude",
            "config",
            "claude-code",
        ):
            out[folder.replace(str(root), "<sandbox>", 1)] = os.listdir(folder)
        dirnames[:] = [d for d in dirnames if d != ".git"]
    return out


# --- reading what Claude Code sent -------------------------------------------------------------


def _texts(message: dict[str, Any]) -> list[str]:
    """Text blocks and tool-result texts of one message, in order."""
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    out: list[str] = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            out.append(str(block.get("text", "")))
        elif block.get("type") == "tool_result":
            inner = block.get("content")
            if isinstance(inner, str):
                out.append(inner)
            elif isinstance(inner, list):
                out.extend(str(b.get("text", "")) for b in inner if isinstance(b, dict))
    return out


def attached_blocks(message: dict[str, Any]) -> tuple[list[dict[str, Any]], str | None]:
    """The files attached to one message (after a Read), and where they were put:
    `in-tool-result` or `separate-blocks`."""
    found: list[dict[str, Any]] = []
    where: str | None = None
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        for text in _texts({"content": [block]}):
            for match in _ATTACHED.finditer(text):
                rest = text[match.end() :]
                end = rest.find("\n\n</system-reminder>")
                body = rest[:end] if end >= 0 else rest
                found.append({"path": match.group("path"), "text": body.strip()})
                kind = "in-tool-result" if block.get("type") == "tool_result" else "separate-blocks"
                where = where or kind
    return found, where


def observe(run: runner.Run) -> dict[str, Any]:
    first = run.first_main
    if first is None:
        return {"start": None}
    labels: dict[str, str] = {}
    start = []
    for block in extract.file_blocks(first):
        group = labels.setdefault(block.label, "ABCDEFGHIJ"[min(len(labels), 9)])
        start.append({"path": block.path, "text": block.text.strip(), "description": group})
    seen: dict[str, Any] = {"start": start}
    later = run.main_requests[1:]
    if later:
        users = [m for m in later[0].messages if m.get("role") == "user"]
        attached, where = attached_blocks(users[-1]) if users else ([], None)
        seen["on_read"] = attached
        seen["sent_as"] = where
    return seen


# --- the check ---------------------------------------------------------------------------------


def local_path(path: str, root: str) -> str:
    """A path Claude Code named, as the workbench names it in the same sandbox."""
    if path == MANAGED or path.startswith(MANAGED + "/"):
        return str(managed_local(Path(root))) + path[len(MANAGED) :]
    return path


def run_case(release: Release, case: Case) -> Outcome:
    title, tree = trees()[case.data["tree"]]
    out = Outcome("instructions", case.name, release.version, AGREE, rule=case.rule)
    out.inputs = {"tree": case.name, "title": title}
    managed_ok = can_overlay() and bool(tree.managed)
    with runner.sandbox(scenario_for(tree)) as (box, ready):
        if tree.memory is not None:
            memory = box.config / memory_dir_rel(str(box.project))
            memory.mkdir(parents=True)
            (memory / "MEMORY.md").write_text(tree.memory, encoding="utf-8")
        ready.responder = _reader(box.project, tree.reads)
        cwd = box.project / tree.cwd if tree.cwd else box.project
        chosen = with_managed(release, box.root) if managed_ok else release
        if not managed_ok:
            shutil.rmtree(box.root / "etc-upper", ignore_errors=True)
        run = runner.run_claude(chosen, ready, box, cwd=cwd)
        out.seconds = run.seconds
        seen = observe(run)
        env = dict(run.env(), WORKBENCH_MANAGED_DIR=str(managed_local(box.root)))
        args = ["instructions"]
        for rel in tree.reads:
            args += ["--read", str(box.project / rel)]
        wb = runner.workbench(box, args, env=env, claude_version=release.version, cwd=cwd)
        report = wb.json() if wb.returncode in (0, 1) and wb.stdout.strip() else None
        root = str(box.root)
        out.raw = {"listings": listings(box.root), "managed": managed_ok}
        if seen["start"] is None:
            out.verdict, out.reason = ERROR, f"Claude Code sent nothing: {tail(run.stderr)}"
            return out
        if report is None:
            out.verdict, out.reason = ERROR, f"workbench instructions failed: {tail(wb.stderr)}"
            return out
        start = [
            dict(b, path=local_path(b["path"], root))
            for b in seen["start"]
            if b["path"].startswith((root, MANAGED))
        ]
        strays = [b["path"] for b in seen["start"] if not b["path"].startswith((root, MANAGED))]
        ours = [{"path": f["path"], "text": f["content"]} for f in report["files"]]
        problems = compare("at start", start, ours)
        if tree.reads:
            got = [dict(b, path=local_path(b["path"], root)) for b in seen.get("on_read") or []]
            ours_read = [{"path": f["path"], "text": f["content"]} for f in report["on_read"]]
            problems += compare("after the reads", got, ours_read)
        described = _descriptions(start, report["files"])
        if described:
            problems.append(described)
        out.observed = scrub(
            {
                "start": start,
                "on_read": [
                    dict(b, path=local_path(b["path"], root)) for b in seen.get("on_read") or []
                ],
                "sent_as": seen.get("sent_as"),
                "managed": managed_ok,
                "outside_sandbox": strays,
            },
            root,
        )
        out.workbench = scrub(
            {
                "start": ours,
                "on_read": [{"path": f["path"], "text": f["content"]} for f in report["on_read"]],
                "described_as": [f["described_as"] for f in report["files"]],
                "findings": sorted({f["code"] for f in report["findings"]}),
            },
            root,
        )
        if problems:
            out.verdict, out.reason = DIFFER, "; ".join(problems)
        if not managed_ok and tree.managed:
            out.reason = (out.reason + "; " if out.reason else "") + "managed files not tried"
        return out


def compare(when: str, theirs: list[dict[str, Any]], ours: list[dict[str, Any]]) -> list[str]:
    """What differs between two ordered file lists, in a sentence or two."""
    problems = []
    their_paths = [b["path"] for b in theirs]
    our_paths = [b["path"] for b in ours]
    missing = [p for p in their_paths if p not in our_paths]
    extra = [p for p in our_paths if p not in their_paths]
    if missing:
        problems.append(
            f"{when}, Claude Code loads {', '.join(map(_short, missing))} and the workbench does not"
        )
    if extra:
        problems.append(
            f"{when}, the workbench loads {', '.join(map(_short, extra))} and Claude Code does not"
        )
    common_theirs = [p for p in their_paths if p in our_paths]
    common_ours = [p for p in our_paths if p in their_paths]
    if common_theirs != common_ours:
        at = next(
            i for i, (a, b) in enumerate(zip(common_theirs, common_ours, strict=False)) if a != b
        )
        problems.append(
            f"{when}, the order differs from file {at + 1}: Claude Code sends "
            f"{_short(common_theirs[at])}, the workbench {_short(common_ours[at])}"
        )
    texts = {b["path"]: b["text"] for b in ours}
    for block in theirs:
        if block["path"] in texts and texts[block["path"]] != block["text"]:
            problems.append(f"{when}, the text of {_short(block['path'])} differs")
    return problems


def _descriptions(start: list[dict[str, Any]], files: list[dict[str, Any]]) -> str | None:
    """Whether files that share a description in Claude Code share one in the workbench."""
    ours = {f["path"]: f["described_as"] for f in files}
    groups: dict[str, set[str]] = {}
    for block in start:
        if block["path"] in ours:
            groups.setdefault(block["description"], set()).add(ours[block["path"]])
    mixed = [sorted(kinds) for kinds in groups.values() if len(kinds) > 1]
    if mixed:
        return (
            "Claude Code sends one description for "
            + " and ".join("/".join(kinds) for kinds in mixed)
            + " files; the workbench tells them apart"
        )
    mine: dict[str, set[str]] = {}
    for block in start:
        if block["path"] in ours:
            mine.setdefault(ours[block["path"]], set()).add(block["description"])
    split = [kind for kind, groups_of in mine.items() if len(groups_of) > 1]
    if split:
        return f"Claude Code describes {', '.join(split)} files in more than one way"
    return None


def _short(path: str) -> str:
    return path.split("/project/", 1)[-1] if "/project/" in path else path


def release_notes(results: dict[str, list[dict[str, Any]]]) -> list[str]:
    """What each release did with the trees, in one line per release."""
    out = []
    for version, outcomes in results.items():
        rows = {o["case"]: o for o in outcomes if o["check"] == "instructions"}
        facts = []
        sources = rows.get("sources")
        if sources and sources["verdict"] != ERROR:
            facts.append(f"rules folders in {_rules_order(sources)}")
            if (sources.get("raw") or {}).get("managed"):
                groups = {
                    b["path"].rsplit("/", 1)[-1]: b["description"]
                    for b in sources["observed"]["start"][:4]
                }
                shared = len({b["description"] for b in sources["observed"]["start"][:4]}) == 1
                facts.append(
                    "managed files described as user files"
                    if shared and groups
                    else "managed files described on their own"
                )
        imports = rows.get("imports")
        if imports and imports["verdict"] != ERROR:
            names = [b["path"].rsplit("/", 1)[-1] for b in imports["observed"]["start"]]
            deepest = max((int(n[3]) for n in names if n.startswith("six")), default=0)
            facts.append(f"imports followed {deepest} hops (a fifth is not)")
        on_read = rows.get("on-read")
        if on_read and on_read["verdict"] != ERROR:
            where = {
                "in-tool-result": "appended to the Read's result",
                "separate-blocks": "as text blocks of their own after the results",
            }.get(on_read["observed"].get("sent_as") or "", "nowhere seen")
            facts.append(f"conditional rules and nested files load on a Read, sent {where}")
        if facts:
            out.append(f"- {version}: " + "; ".join(facts) + ".")
    return out


def _rules_order(row: dict[str, Any]) -> str:
    loaded = [
        b["path"].split("/.claude/rules/", 1)[1]
        for b in row["observed"]["start"]
        if "/project/.claude/rules/" in b["path"]
    ]
    if loaded == sorted(loaded):
        return "name order"
    listing = (row.get("raw") or {}).get("listings", {}).get("<sandbox>/project/.claude/rules", [])
    tops = [name for name in listing if any(p == name or p.startswith(name + "/") for p in loaded)]
    firsts = list(dict.fromkeys(p.split("/", 1)[0] for p in loaded))
    return (
        "directory order"
        if tops == firsts
        else "an order that is neither by name nor the directory's"
    )


CHECK = Check(
    "instructions",
    "the CLAUDE.md files, rules and imports Claude Code sent",
    _cases,
    run_case,
    weight=3.0,
    summary=release_notes,
)
