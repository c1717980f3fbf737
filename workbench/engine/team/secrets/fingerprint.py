"""Stable fingerprints: how a finding is named in baselines without naming the secret."""

from __future__ import annotations

import hashlib

FINGERPRINT_HEX_CHARS = 32


def fingerprint(rule_id: str, path: str, secret: str) -> str:
    """A truncated sha256 of rule id, path and secret: stable across runs and line moves.

    The path keeps the same value in two files apart (a baseline entry covers one file), and
    the line is left out so that editing above a finding does not unsuppress it.
    """
    material = "\x00".join((rule_id, path, secret)).encode("utf-8", "surrogatepass")
    return hashlib.sha256(material).hexdigest()[:FINGERPRINT_HEX_CHARS]
