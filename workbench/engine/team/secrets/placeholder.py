"""Is a matched secret probably a placeholder? A label for people, never a way to pass.

Only evidence in the value itself counts, never where it sits: a real-looking key written by
hand in an "example" section is reported as a real key, because nothing tells it from one.
The evidence, strongest first:
- the key is one that a vendor published as an example (`known_examples`, stored as hashes);
- a placeholder word in the part after the fixed prefix, written in one case (`EXAMPLE`,
  `your_token`, `Sample`), so that a random mixed-case body that happens to spell a word in
  alternating case is not taken for one;
- gitleaks' own filters (spec 03, appendix): a body of one repeated character or of at most
  three distinct ones, runs such as `abcdef` or `123456`, and Shannon entropy at or below the
  rule's threshold.
Claude Code blocks these matches anyway, so the workbench blocks them too and only tells the
user that the value looks like an example.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter

from workbench.engine.team.secrets.known_examples import known_example
from workbench.engine.team.secrets.rules import SecretRule
from workbench.engine.wording import plural_noun

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
    # H = log2(n) - sum(c * log2(c)) / n over the count c of each distinct character.
    counts = Counter(text).values()
    if total < len(_C_LOG2_C):
        weighted = sum(_C_LOG2_C[count] for count in counts)
    else:
        weighted = sum(count * math.log2(count) for count in counts)
    return math.log2(total) - weighted / total


_C_LOG2_C = [0.0] + [c * math.log2(c) for c in range(1, 1025)]


def _sequences(length: int) -> re.Pattern[str]:
    runs = [
        alphabet[i : i + length]
        for alphabet in (string.ascii_lowercase, string.digits)
        for i in range(len(alphabet) - length + 1)
    ]
    return re.compile("|".join(runs))


def _placeholder_word(body: str) -> str | None:
    """A placeholder word in `body`, written as people write words: all lower, all upper, or
    with at most one capital after the first letter (`Sample`, `YourKey`), not `sAmPlE`."""
    lowered = body.lower()
    for word in PLACEHOLDER_WORDS:
        at = lowered.find(word)
        while at != -1:
            written = body[at : at + len(word)]
            inner_capitals = sum(1 for c in written[1:] if c.isupper())
            if written.isupper() or inner_capitals <= 1 or not written.isalpha():
                return word
            at = lowered.find(word, at + 1)
    return None


_IDENTICAL_RUN = re.compile(rf"(.)\1{{{LONGEST_IDENTICAL_RUN - 1}}}", re.DOTALL)
_SEQUENCE = _sequences(LONGEST_SEQUENCE)
# Placeholders are short; a long secret (a private key, a PyPI token) is judged by its start.
MAX_JUDGED = 160


def placeholder_reason(rule: SecretRule, secret: str) -> str | None:
    """Why `secret` looks like a placeholder, or None. The reason never quotes the secret."""
    published = known_example(rule.id, secret)
    if published is not None:
        return f"a published example key ({published})"
    secret = secret[:MAX_JUDGED]
    body = secret[rule.prefix_len :] if len(secret) > rule.prefix_len else secret
    word = _placeholder_word(body)
    if word is not None:
        return f"contains the placeholder text {word!r}"
    distinct = len(set(body))
    if distinct <= 3:
        return f"only {distinct} distinct {plural_noun(distinct, 'character')} after the prefix"
    if _IDENTICAL_RUN.search(body):
        return "a long run of one repeated character"
    if _SEQUENCE.search(body[:64].lower()):
        return "a run of sequential characters (like abcdef or 123456)"
    if rule.entropy is not None:
        entropy = shannon_entropy(secret)
        if entropy <= rule.entropy:
            return (
                f"low entropy ({entropy:.2f} bits per character, rule threshold {rule.entropy:g})"
            )
    return None
