"""The snapshot names the tests of this folder would use, kept at collection time for
`test_snapshot_files.py` (in a module of its own: pytest loads conftest.py under another name
than the one tests import it by, so a key defined there would be two keys)."""

from __future__ import annotations

from pathlib import Path

import pytest

FOLDER = Path(__file__).parent
SNAPSHOTS = FOLDER / "__snapshots__"
SNAPSHOT_NAMES = pytest.StashKey[dict[str, set[str]]]()


def record_snapshot_names(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Per test module of this folder, `[Class.]test[params]` of every collected test. Under
    xdist every worker collects every test, so whichever worker checks sees them all."""
    names: dict[str, set[str]] = {}
    for item in items:
        if Path(item.path).parent != FOLDER:
            continue
        cls = getattr(item, "cls", None)
        names.setdefault(Path(item.path).stem, set()).add(
            f"{cls.__name__}.{item.name}" if cls else item.name
        )
    narrowed = any("::" in str(arg) for arg in config.args)  # some tests were never collected
    config.stash[SNAPSHOT_NAMES] = {} if narrowed else names
