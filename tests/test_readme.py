"""The README stays true: its two commands come first and every key binding id is listed."""

from __future__ import annotations

import importlib
from pathlib import Path

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def test_readme_opens_with_the_two_commands():
    first_block = README.split("```", 2)[1]
    assert "make run" in first_block and "make test" in first_block


def test_every_binding_id_is_documented():
    from workbench.ui.actions import ACTIONS
    from workbench.ui.panes.registry import PANE_INFOS

    ids = [spec.id for spec in ACTIONS]
    for info in PANE_INFOS:
        ids.extend(
            spec.id for spec in getattr(importlib.import_module(info.module), "PANE_ACTIONS", ())
        )
    missing = [binding_id for binding_id in ids if f"`{binding_id}`" not in README]
    assert missing == []


def test_every_command_is_documented():
    from workbench.cli import build_parser

    parser = build_parser()
    [commands] = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    missing = [
        name
        for name in commands.choices
        if f"`{name}" not in README and f"workbench {name}" not in README
    ]
    assert missing == []


def test_the_architecture_tree_names_every_package_folder():
    """The layout the README draws is the tree: every folder of the package is in it."""
    package = Path(__file__).resolve().parent.parent / "workbench"
    drawn = README.split("## Architecture", 1)[1].split("```", 2)[1]
    folders = sorted(
        path.relative_to(package).as_posix()
        for path in package.rglob("*")
        if path.is_dir() and (path / "__init__.py").exists()
    )
    missing = [f for f in folders if f"{f.rsplit('/', 1)[-1]}/" not in drawn]
    assert missing == []
