"""Every recorded snapshot belongs to a test. Run in one process, the snapshot plugin fails a
run that leaves an SVG no test takes; under xdist (as `make test` runs) it cannot tell, so
this test does, from the tests every worker collects."""

from __future__ import annotations

import re

import pytest

from tests.ui.snapshot_names import SNAPSHOT_NAMES, SNAPSHOTS


def test_every_snapshot_belongs_to_a_test(request: pytest.FixtureRequest) -> None:
    names = request.config.stash.get(SNAPSHOT_NAMES, {})
    folders = sorted(f for f in SNAPSHOTS.iterdir() if f.is_dir())
    modules = {f.name for f in folders if (SNAPSHOTS.parent / f"{f.name}.py").is_file()}
    if not names or any(name not in names for name in modules):
        pytest.skip("the run collected only part of tests/ui, so some snapshots' tests are unseen")
    stale = [
        f"{folder.name}/{svg.name}"
        for folder in folders
        for svg in sorted(folder.glob("*.svg"))
        if re.sub(r"\.\d+$", "", svg.stem) not in names.get(folder.name, set())
    ]
    assert not stale, f"snapshots no test takes (remove them or re-record): {stale}"
