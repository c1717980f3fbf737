"""The instruction-file rules (CLAUDE.md, rules, imports) of each release: one rule group.

Both behaviours were read off the real CLI with `make oracle` (check `instructions`): the
trees are our own files, and what each release sent in its first request (and after a Read)
was cut out of the recorded requests. Both releases load the same files from the same places
(managed, user, every folder from the filesystem root down to the working folder, then auto
memory), follow imports to the same depth and skip the same imports; they differ in the
order of the files in a rules folder, how managed files are described, and how files loaded
for a Read are sent.
"""

from __future__ import annotations

from typing import Literal

from workbench.engine.records import Record


class InstructionRules(Record, eq=False):
    """How a release finds, orders and sends instruction files."""

    rules_order: Literal["name", "directory"]
    """`name`: the files of a rules folder (and its subfolders, in place) sorted by name;
    `directory`: in the order the folder lists them (what `ls -f` shows)."""
    managed_described_as: Literal["user", "managed"]
    """The description sent with managed-policy files: the user files' one, or their own."""
    import_depth_limit: int = 5
    """A file this many imports away from a CLAUDE.md or rule is not loaded (observed: a
    chain's fourth hop loads, its fifth does not)."""
    imports_outside_need_approval: bool = True
    """An import outside the working folder, from a managed, project or local file, loads
    only once the project approved external imports; user files may import anything."""
    conditional_on_read: bool = True
    """Rules with `paths` load only when a file they match is read (none at start in -p)."""
    read_attachments: Literal["in-tool-result", "separate-blocks"] = "in-tool-result"
    """Where files loaded for a Read are sent: appended to the tool result's text, or as
    text blocks after the tool results."""
    notes: tuple[str, ...] = ()


LEGACY = InstructionRules(
    rules_order="name",
    managed_described_as="user",
    read_attachments="in-tool-result",
)
CURRENT = InstructionRules(
    rules_order="directory",
    managed_described_as="managed",
    read_attachments="separate-blocks",
    notes=(
        "the files of a rules folder load in the order the folder lists them, which differs "
        "between file systems; the workbench lists them in this machine's order",
    ),
)
