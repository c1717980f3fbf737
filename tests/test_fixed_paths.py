"""The fixed-length project folder the snapshot tests build on keeps every shown figure fixed."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import FIXED_PATH_LENGTH, HASH_CHARACTERS, fixed_length_dir
from workbench.engine.claude_paths import sanitize_path


def test_the_hashed_project_name_is_the_same_length_wherever_the_temp_folder_is(tmp_path):
    # A transcript path's length moves a compaction estimate. The name Claude Code gives a
    # long project folder ends in a hash, five base-36 characters for about one path in
    # thirty-five and six otherwise, so the folder's padding is picked to give six.
    lengths = set()
    for n in range(120):  # temp folders of many names, as pytest's numbering gives them
        base = tmp_path / f"run-{n}"
        base.mkdir()
        folder = fixed_length_dir(base, project="sample/legacy-billing")
        assert len(str(folder)) == FIXED_PATH_LENGTH
        lengths.add(len(sanitize_path(str(folder / "sample" / "legacy-billing"))))
    assert lengths == {200 + 1 + HASH_CHARACTERS}


def test_without_a_project_it_is_only_a_length(tmp_path: Path):
    folder = fixed_length_dir(tmp_path)
    assert len(str(folder)) == FIXED_PATH_LENGTH and set(folder.name) == {"p"}
