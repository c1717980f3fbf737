"""Pure render functions for the Instructions pane: engine report in, Textual Content out."""

from __future__ import annotations

from textual.content import Content

from workbench.engine.instructions.models import (
    KIND_NAMES,
    Finding,
    InstructionFile,
    InstructionsReport,
)
from workbench.ui.formatting import plural

KIND_STYLE = {
    "managed": "bold $error",
    "user": "bold $secondary",
    "project": "bold $primary",
    "local": "bold $warning",
    "auto-memory": "bold $success",
    "team-memory": "bold $success",
}
SEVERITY_STYLE = {
    "error": "bold $text-error",
    "warning": "$text-warning",
    "info": "$foreground-muted",
}


def display_path(path: str, report: InstructionsReport) -> str:
    """A path as the pane shows it: relative inside the working folder, the config home and
    the home folder written symbolically (never this machine's absolute temp paths)."""
    cwd = report.working_dir.rstrip("/") + "/"
    if path.startswith(cwd):
        return path[len(cwd) :]
    root = report.project_root.rstrip("/") + "/"
    if path.startswith(root):
        return "<project>/" + path[len(root) :]
    home = report.home.rstrip("/")
    config = report.config_home.rstrip("/")
    if config and path.startswith(config + "/"):
        label = "~/.claude" if home and config == f"{home}/.claude" else "$CLAUDE_CONFIG_DIR"
        rest = path[len(config) :]
        if rest.startswith("/projects/") and rest.endswith("/memory/MEMORY.md"):
            rest = "/projects/<project>/memory/MEMORY.md"
        return label + rest
    if home and path.startswith(home + "/"):
        return "~" + path[len(home) :]
    return path


def summary_content(report: InstructionsReport) -> Content:
    """How much loads, from where, and how many problems."""
    if not report.files:
        return Content.styled("No instruction file loads for this folder.", "$foreground-muted")
    by_kind = report.tokens_by_kind()
    parts: list[Content | str | tuple[str, str]] = [
        (plural(len(report.files), "file"), "bold"),
        " · ",
        (f"{report.total_tokens:,} tokens", "bold"),
        " at session start  ·  ",
    ]
    for kind, tokens in by_kind.items():
        parts += [
            (KIND_NAMES.get(kind, kind).split(" (")[0], KIND_STYLE.get(kind, "")),
            f" {tokens:,}  ",
        ]
    errors = sum(1 for f in report.findings if f.severity == "error")
    warnings = sum(1 for f in report.findings if f.severity == "warning")
    if errors or warnings:
        parts += ["·  ", (plural(errors, "error"), SEVERITY_STYLE["error"] if errors else ""), ", "]
        parts += [(plural(warnings, "warning"), SEVERITY_STYLE["warning"] if warnings else "")]
    return Content.assemble(*parts)


def file_prompt(
    number: int, item: InstructionFile, report: InstructionsReport, width: int
) -> Content:
    """One loaded file: its place in the order, tokens, kind and the import tree."""
    branch = ("   " * (item.depth - 1) + " └ @") if item.depth else ""
    return Content.assemble(
        (f"{number:>{width}} ", "$foreground-muted"),
        (f"{item.tokens:>7,} ", "bold"),
        (f"{item.kind:<11} ", KIND_STYLE.get(item.kind, "")),
        (branch, "$foreground-muted"),
        display_path(item.path, report),
        (f"  ({item.origin})" if item.origin == "rule" else "", "$foreground-muted"),
    )


def preview_content(
    item: InstructionFile | None, report: InstructionsReport, lines: int = 8
) -> Content:
    """The start of what Claude Code sends of the highlighted file."""
    if item is None:
        return Content("")
    shown = item.content.split("\n")
    head = "\n".join(shown[:lines]) + ("\n…" if len(shown) > lines else "")
    origin = f"imported by {display_path(item.parent, report)}" if item.parent else item.origin
    return Content.assemble(
        (display_path(item.path, report), "bold"),
        (
            f"  {KIND_NAMES.get(item.kind, item.kind)} · {origin} · {item.chars:,} characters\n",
            "$foreground-muted",
        ),
        (head, ""),
    )


def conditional_content(report: InstructionsReport) -> Content:
    """Rules that wait for a matching Read, with their globs and what matches now."""
    if not report.conditional:
        return Content("")
    rows: list[Content] = [
        Content.assemble(
            ("Rules with paths", "bold"),
            ("  load when Claude Code reads a matching file", "$foreground-muted"),
        )
    ]
    for rule in report.conditional:
        if rule.matches:
            found = Content.styled(
                f"{rule.matches:,} match{'es' if rule.matches != 1 else ''}, e.g. {', '.join(rule.examples)}",
                "$text-success",
            )
        else:
            found = Content.styled("nothing in the project matches", "$text-warning")
        rows.append(
            Content.assemble(
                "  ",
                (display_path(rule.path, report), ""),
                ("  " + ", ".join(rule.globs) + "  → ", "$foreground-muted"),
                found,
            )
        )
    return Content("\n").join(rows)


def nested_content(report: InstructionsReport) -> Content:
    """Folders below the working folder whose files load on a Read inside them."""
    if not report.nested:
        return Content("")
    names = ", ".join(display_path(n.folder, report) + "/" for n in report.nested[:12])
    more = f" and {len(report.nested) - 12} more" if len(report.nested) > 12 else ""
    return Content.assemble(
        ("Folders below", "bold"),
        ("  their files load when a file in them is read: ", "$foreground-muted"),
        names + more,
    )


def finding_line(finding: Finding, report: InstructionsReport) -> Content:
    where = display_path(finding.path, report)
    if finding.parent:
        where += f" (from {display_path(finding.parent, report)}"
        where += f" line {finding.line})" if finding.line else ")"
    return Content.assemble(
        (f"{finding.severity:<8}", SEVERITY_STYLE.get(finding.severity, "")),
        (where, "bold"),
        ": ",
        (finding.message, ""),
    )


def findings_content(report: InstructionsReport) -> Content:
    """Every way a file fails to load, errors first."""
    if not report.findings:
        return Content.styled("Every file loads as written.", "$text-success")
    order = {"error": 0, "warning": 1, "info": 2}
    ranked = sorted(report.findings, key=lambda f: order.get(f.severity, 3))
    return Content("\n").join(
        [
            Content.styled("Why files do not load", "bold"),
            *(finding_line(f, report) for f in ranked),
        ]
    )
