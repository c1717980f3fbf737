"""The import contracts and the type checker, run as tests.

They are part of the suite rather than steps before it so that, under xdist, they run on one
worker while the others run tests: mypy takes about 15 s of one core on a fresh clone, time
the suite would otherwise wait for with the second core mostly idle. `make test` still runs
ruff first (it takes a fraction of a second and fails fast).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600)


def test_import_contracts_hold() -> None:
    """import-linter's contracts in pyproject.toml: the engine never imports a front end, and
    the front ends import only the engine's public surface."""
    done = _run(str(BIN / "lint-imports"))
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_package_type_checks() -> None:
    """mypy over the whole `workbench` package (files and options in pyproject.toml)."""
    done = _run(sys.executable, "-m", "mypy")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found" in done.stdout
