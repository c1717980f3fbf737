"""Is a matched secret probably a placeholder? A label for people, never a way to pass.

The ideas come from gitleaks' filters (spec 03, appendix): Shannon entropy at or below the
rule's threshold, placeholder words, a body that is one repeated character, and runs such as
`abcdef` or `123456`. Claude Code blocks these matches anyway, so the workbench blocks them too
and only tells the user that the value looks like an example.
"""

from __future__ import annotations

import math
from collections import Counter

from workbench.engine.team.secrets.rules import SecretRule

# Case-insensitive substrings that real random tokens practically never contain.
PLACEHOLDER_WORDS = (
    "example",
    "xxxx",
    "changeme",
    "placeholder",
    "dummy",
    "sample",
    "fake",
    "redacted",
    "your_",
    "your-",
    "yourkey",
    "yourtoken",
    "abcdefghijklmnopqrstuvwxyz",
    "0123456789",
    "1234567890",
)
LONGEST_IDENTICAL_RUN = 6
LONGEST_SEQUENCE = 6


def shannon_entropy(text: str) -> float:
    """Bits per character, as gitleaks computes it."""
    if not text:
        return 0.0
    total = len(text)
    return -sum(n / total * math.log2(n / total) for n in Counter(text).values())


def _longest_identical_run(text: str) -> int:
    best = run = 0
    previous = ""
    for char in text:
        run = run + 1 if char == previous else 1
        previous = char
        best = max(best, run)
    return best


def _longest_sequence(text: str) -> int:
    best = run = 1 if text else 0
    for before, after in zip(text, text[1:], strict=False):
        run = run + 1 if ord(after) - ord(before) == 1 else 1
        best = max(best, run)
    return best


def placeholder_reason(rule: SecretRule, secret: str) -> str | None:
    """Why `secret` looks like a placeholder, or None. The reason never quotes the secret."""
    lowered = secret.lower()
    for word in PLACEHOLDER_WORDS:
        if word in lowered:
            return f"contains the placeholder text {word!r}"
    body = secret[rule.prefix_len :] if len(secret) > rule.prefix_len else secret
    distinct = len(set(body))
    if distinct <= 3:
        return f"only {distinct} distinct character{'s' if distinct != 1 else ''} after the prefix"
    if _longest_identical_run(body) >= LONGEST_IDENTICAL_RUN:
        return "a long run of one repeated character"
    if _longest_sequence(body) >= LONGEST_SEQUENCE:
        return "a run of sequential characters (like abcdef or 123456)"
    if rule.entropy is not None:
        entropy = shannon_entropy(secret)
        if entropy <= rule.entropy:
            return (
                f"low entropy ({entropy:.2f} bits per character, rule threshold {rule.entropy:g})"
            )
    return None
