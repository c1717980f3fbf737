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
