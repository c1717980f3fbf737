"""The engine and CLI stay light: no Textual, Rich, anthropic or tiktoken at import time."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
HEAVY = ("textual", "rich", "anthropic", "tiktoken")


def _loaded_after(statement: str) -> list[str]:
    code = f"{statement}\nimport sys\nprint(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    return [m for m in out.stdout.strip().split(",") if m]


def test_engine_imports_no_ui_or_heavy_modules():
    assert _loaded_after("import workbench.engine") == []


def test_every_engine_module_is_ui_free():
    modules = sorted(
        ".".join(p.relative_to(REPO).with_suffix("").parts)
        for p in (REPO / "workbench" / "engine").rglob("*.py")
    )
    statement = "\n".join(f"import {m}" for m in modules if not m.endswith("__init__"))
    loaded = _loaded_after(statement)
    assert "textual" not in loaded and "rich" not in loaded
    assert "anthropic" not in loaded and "tiktoken" not in loaded


def test_cli_defers_the_ui():
    assert _loaded_after("import workbench.cli; workbench.cli.build_parser()") == []


@pytest.mark.parametrize("package", ["workbench/engine"])
def test_no_ui_import_statements_in_engine(package: str):
    offenders = []
    for path in (REPO / package).rglob("*.py"):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            stripped = line.strip()
            if stripped.startswith(("import textual", "from textual", "import rich", "from rich")):
                offenders.append(f"{path.relative_to(REPO)}:{number}")
    assert offenders == []


FRONT_ENDS = ("workbench.ui", "workbench.commands", "workbench.server", "workbench.cli")


def test_every_engine_module_loads_no_front_end():
    """The run-time half of the import contract in pyproject.toml: importing all of the engine
    (lazy imports included once executed at import) loads no front-end module."""
    modules = sorted(
        ".".join(p.relative_to(REPO).with_suffix("").parts)
        for p in (REPO / "workbench" / "engine").rglob("*.py")
    )
    imports = "\n".join(f"import {m}" for m in modules if not m.endswith("__init__"))
    code = (
        f"{imports}\nimport sys\n"
        f"print('\\n'.join(m for m in sys.modules if m.startswith({FRONT_ENDS!r})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert out.stdout.split() == []


def _public_surface() -> dict[str, set[str]]:
    """The engine modules each front end may import at run time, read from the contract in
    pyproject.toml (its `ignore_imports`), so this test and import-linter stay in step."""
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [
        c
        for c in config["tool"]["importlinter"]["contracts"]
        if "workbench.commands" in c.get("source_modules", ())
    ]
    allowed: dict[str, set[str]] = {"workbench.ui": set(), "workbench.commands": set()}
    for rule in contract.get("ignore_imports", ()):
        source, target = (part.strip() for part in rule.split("->"))
        assert source.endswith(".**"), f"an exception for one module is back: {rule}"
        allowed[source.removesuffix(".**")].add(target)
    return allowed


def _run_time_imports(path: Path) -> list[tuple[int, str]]:
    """`(line, module)` for each import statement outside `if TYPE_CHECKING:` blocks."""
    import ast

    found: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and ast.unparse(child.test) == "TYPE_CHECKING":
                for other in child.orelse:
                    visit(other)
                continue
            if isinstance(child, ast.Import):
                found.extend((child.lineno, alias.name) for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module and not child.level:
                found.append((child.lineno, child.module))
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def test_front_ends_import_only_the_engines_public_surface():
    """The front-end half of the contract, checked without import-linter: at run time, the app
    and the commands import `workbench.engine`, its errors and the areas' models, nothing else
    of the engine (its internals are reached through the facade's services)."""
    allowed = _public_surface()
    offenders = []
    for front_end, public in allowed.items():
        folder = REPO.joinpath(*front_end.split("."))
        for path in sorted(folder.rglob("*.py")):
            for line, module in _run_time_imports(path):
                if not module.startswith("workbench.engine.") or module in public:
                    continue
                offenders.append(f"{path.relative_to(REPO)}:{line} imports {module}")
    assert offenders == []
