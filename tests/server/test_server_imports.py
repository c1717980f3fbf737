"""The server package stays free of the UI stack, at import and while serving."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_server_never_loads_textual_or_rich(tmp_path: Path):
    code = f"""
import sys
import workbench.server.app, workbench.server.demo, workbench.server.keys
import workbench.server.runner, workbench.server.store
from workbench.server import TeamServer
with TeamServer({str(tmp_path / "db.sqlite3")!r}, ["t"]) as server:
    pass
print(",".join(m for m in ("textual", "rich") if m in sys.modules))
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert done.stdout.strip() == ""
