"""Reading the team folder the way a push does (spec 03 §6.4 step 1).

Every regular file counts, not only `.md` (symlinks are neither followed nor sent). Files over
250,000 bytes, files that hold a secret in their text or their name (path) and unreadable files
are left out and reported; a file whose name holds a secret is reported under its redacted
name. Text is
decoded as Node's `readFile(…, 'utf8')` does, so invalid bytes become U+FFFD.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from workbench.engine.atomic import TEMP_SUFFIX
from workbench.engine.team.sync.keys import redacted_key, secrets_in_keys
from workbench.engine.team.sync.models import LocalSnapshot, SkippedSecret
from workbench.engine.team.sync.protocol import MAX_FILE_SIZE_BYTES, js_sort_key
from workbench.engine.userfiles import read_start, utf16_text

Scanner = Callable[[str], Sequence[Any]]


def default_scanner() -> Scanner:
    from workbench.engine.team.secrets import scan_for_secrets

    return scan_for_secrets


def iter_team_files(team_dir: str) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """(key, entry) for every regular file under `team_dir`; folder errors are skipped."""
    root = team_dir.rstrip("/" + os.sep) or os.sep
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                children = list(listing)
        except OSError:
            continue  # ENOENT/EACCES/EPERM on a folder: nothing to read there
        for child in children:
            try:
                if child.is_dir(follow_symlinks=False):
                    stack.append(child.path)
                    continue
                if not child.is_file(follow_symlinks=False):
                    continue
            except OSError:
                continue
            if child.name.startswith(".") and child.name.endswith(TEMP_SUFFIX):
                continue  # our own atomic-write temp file, about to be renamed
            key = os.path.relpath(child.path, root).replace("\\", "/")
            yield key, child


def read_local_entries(
    team_dir: str,
    max_entries: int | None = None,
    *,
    scanner: Scanner | None = None,
) -> LocalSnapshot:
    """The pushable entries of `team_dir` with their hashes, and what was skipped."""
    scan = scanner or default_scanner()
    entries: dict[str, str] = {}
    hashes: dict[str, str] = {}
    secrets: list[SkippedSecret] = []
    too_large: list[str] = []
    unreadable: list[str] = []
    files = []
    for key, child in iter_team_files(team_dir):
        try:
            key.encode("utf-8")
        except UnicodeEncodeError:
            unreadable.append(key.encode("utf-8", "replace").decode("utf-8"))
            continue  # a file name that is not UTF-8 cannot be a protocol key
        files.append((key, child))
    named = secrets_in_keys((key for key, _ in files), scan)
    for key, child in files:
        in_name = named.get(key)
        if in_name is not None:
            # Named without the secret: the name itself is what must not leave the machine.
            shown = redacted_key(key, scan)
            secrets.append(SkippedSecret(shown, in_name.rule_id, in_name.label, found_in="name"))
            continue
        try:
            if child.stat(follow_symlinks=False).st_size > MAX_FILE_SIZE_BYTES:
                too_large.append(key)
                continue
            raw = read_start(child.path, MAX_FILE_SIZE_BYTES + 1)[0]
        except OSError:
            unreadable.append(key)
            continue
        if len(raw) > MAX_FILE_SIZE_BYTES:
            too_large.append(key)  # it grew between stat and read
            continue
        try:
            text = raw.decode("utf-8")
            digest = hashlib.sha256(raw).hexdigest()  # valid UTF-8: the bytes are the encoding
        except UnicodeDecodeError:
            text = raw.decode("utf-8", "replace")
            digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        found = scan(text)
        if not found and (utf16 := utf16_text(raw)) is not None:
            # The push would send the secret's characters all the same: scan what it holds.
            found = scan(utf16)
        if found:
            first = found[0]
            rule_ids = tuple(dict.fromkeys(m.rule_id for m in found))
            labels = tuple(dict.fromkeys(m.label for m in found))
            secrets.append(SkippedSecret(key, first.rule_id, first.label, rule_ids, labels))
            continue
        entries[key] = text
        hashes[key] = "sha256:" + digest

    over_limit: list[str] = []
    ordered = sorted(entries, key=js_sort_key)
    if max_entries is not None and len(ordered) > max_entries:
        over_limit = ordered[max_entries:]
        for key in over_limit:
            del entries[key]
            del hashes[key]
    return LocalSnapshot(
        entries=entries,
        hashes=hashes,
        skipped_secrets=tuple(sorted(secrets, key=lambda s: js_sort_key(s.path))),
        skipped_too_large=tuple(sorted(too_large, key=js_sort_key)),
        unreadable=tuple(sorted(unreadable)),
        over_limit=tuple(over_limit),
    )
