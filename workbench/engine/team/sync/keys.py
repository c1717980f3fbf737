"""Checks on team-memory keys (file names) that go beyond path safety.

A key is a relative path, so it is input twice over: it must be a name a file can have (valid
Unicode, no empty or over-long parts, not a folder), and it is shared with every teammate, so a
credential in it must never be uploaded or written. A key is shown to the user only through
`display_key` (control characters and lone surrogates escaped, so one key is one line) and, when
it holds a secret, through `redacted_key`, which withholds every part that holds one.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Sequence
from typing import Any

NAME_MAX_BYTES = 255
"""The longest file or folder name Linux, macOS and Windows file systems accept (in UTF-8)."""
PATH_MAX_BYTES = 4096
MAX_SHOWN_CHARS = 200
REDACTED = "[REDACTED]"

Scanner = Callable[[str], Sequence[Any]]


def unicode_problem(key: str) -> str | None:
    """Why `key` is no text a file system (or UTF-8) can take, or None."""
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        return "it is not valid Unicode (it holds a lone surrogate)"
    return None


def file_name_problem(key: str) -> str | None:
    """Why `key` can never name a file in a team folder, or None when it can."""
    problem = unicode_problem(key)
    if problem is not None:
        return problem
    encoded = key.encode("utf-8")
    if not key:
        return "it is empty"
    if len(encoded) > PATH_MAX_BYTES:
        return f"it is longer than {PATH_MAX_BYTES} bytes"
    parts = key.split("/")
    if parts[-1] in ("", ".", ".."):
        return "it names a folder, not a file"
    if any(len(part.encode("utf-8")) > NAME_MAX_BYTES for part in parts):
        return f"a part of it is longer than {NAME_MAX_BYTES} bytes, the most a file name can hold"
    return None


def display_key(key: str) -> str:
    """`key` safe to print on one line: control, format and surrogate characters escaped."""
    out = []
    for char in key:
        if char.isprintable() and not 0xD800 <= ord(char) <= 0xDFFF:
            out.append(char)
        elif ord(char) <= 0xFF:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) <= 0xFFFF:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    shown = "".join(out)
    return shown if len(shown) <= MAX_SHOWN_CHARS else shown[: MAX_SHOWN_CHARS - 3] + "..."


def _scan_texts(part: str) -> list[str]:
    # Most rules need a quote, a space or the end after a token, so `token.md` would slip
    # through a scan of the bare name: scan the name with its dots turned into spaces too.
    texts = [part]
    if "." in part:
        texts.append(part.replace(".", " "))
    return texts


def _key_texts(key: str) -> list[str]:
    texts = _scan_texts(key)
    for part in key.split("/"):
        texts.extend(_scan_texts(part))
    return list(dict.fromkeys(texts))


def secret_in_key(key: str, scan: Scanner) -> Any | None:
    """The first secret match in a key (its whole text and each of its parts), or None."""
    for text in _key_texts(key):
        found = scan(text)
        if found:
            return found[0]
    return None


KEYS_PER_SCAN = 256


def secrets_in_keys(keys: Iterable[str], scan: Scanner) -> dict[str, Any]:
    """`secret_in_key` for many keys: key -> first match, for the keys that hold one.

    Keys are scanned together, one text per group joined by newlines (whitespace ends a token
    for every rule, as the end of a lone key does), and one by one only in a group that
    matched: a scan costs far more per call than per byte.
    """
    ordered = list(keys)
    found: dict[str, Any] = {}
    for start in range(0, len(ordered), KEYS_PER_SCAN):
        group = ordered[start : start + KEYS_PER_SCAN]
        if not scan("\n".join(text for key in group for text in _key_texts(key))):
            continue
        for key in group:
            match = secret_in_key(key, scan)
            if match is not None:
                found[key] = match
    return found


def redacted_key(key: str, scan: Scanner) -> str:
    """`key` with each part that holds a secret replaced by `[REDACTED]` (its extension kept);
    all of it when the secret spans parts."""
    parts = []
    for part in key.split("/"):
        if not secret_in_key(part, scan):
            parts.append(part)
            continue
        stem, ext = posixpath.splitext(part)
        # The extension stays when the secret lies wholly in the stem.
        short_ext = bool(ext) and ext[1:].isalnum() and len(ext) <= 10
        keep_ext = short_ext and secret_in_key(stem, scan) is not None
        parts.append(REDACTED + ext if keep_ext else REDACTED)
    shown = "/".join(parts)
    if secret_in_key(shown, scan) is not None:
        return REDACTED
    return display_key(shown)
