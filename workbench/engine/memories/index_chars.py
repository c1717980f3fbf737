"""What newer Claude Code releases clean out of the MEMORY.md text they load (from 2.1.284).

Measured code point by code point on the real CLI (`make oracle`, check `index-chars`): after
the 200-line and 25,000-unit cut, which still counts the text as written, CR (alone or before
LF), U+2028 and U+2029 become LF; control, format, private-use and unassigned characters and
the other default-ignorables are removed, except tab, ZWJ, ZWNJ and the emoji presentation
selectors U+FE0E/U+FE0F; then the text is trimmed again. The release's character data is
newer than Python's `unicodedata` (it keeps scripts Unicode added after 14.0), so the ranges
it keeps that Python calls unassigned are listed here, as observed.
"""

from __future__ import annotations

import bisect
import unicodedata
from functools import lru_cache

_KEPT_CONTROLS = frozenset({0x09, 0x0A})
_KEPT_FORMATS = frozenset({0x200C, 0x200D})
_IGNORABLE_LETTERS_AND_MARKS = frozenset(
    {0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180C, 0x180D, 0x180F, 0x3164, 0xFFA0}
    | set(range(0xFE00, 0xFE0E))
    | set(range(0xE0100, 0xE01F0))
)
"""Default-ignorable letters and marks the release removes (variation selectors but the two
emoji presentation selectors, Hangul fillers, Mongolian and Khmer invisible signs)."""

_ASSIGNED_LATER = (
    (0x088F, 0x088F), (0x0897, 0x0897), (0x0C5C, 0x0C5C), (0x0CDC, 0x0CDC), (0x0CF3, 0x0CF3),
    (0x0ECE, 0x0ECE), (0x1ACF, 0x1ADD), (0x1AE0, 0x1AEB), (0x1B4E, 0x1B4F), (0x1B7F, 0x1B7F),
    (0x1C89, 0x1C8A), (0x20C1, 0x20C1), (0x2427, 0x2429), (0x2B96, 0x2B96), (0x2FFC, 0x2FFF),
    (0x31E4, 0x31E5), (0x31EF, 0x31EF), (0xA7CB, 0xA7DC), (0xA7F1, 0xA7F1), (0xFBC3, 0xFBD2),
    (0xFD90, 0xFD91), (0xFDC8, 0xFDCE), (0x105C0, 0x105F3), (0x10940, 0x10959),
    (0x10D40, 0x10D65), (0x10D69, 0x10D85), (0x10D8E, 0x10D8F), (0x10EC2, 0x10EC7),
    (0x10ED0, 0x10ED8), (0x10EFA, 0x10EFF), (0x1123F, 0x11241), (0x11380, 0x11389),
    (0x1138B, 0x1138B), (0x1138E, 0x1138E), (0x11390, 0x113B5), (0x113B7, 0x113C0),
    (0x113C2, 0x113C2), (0x113C5, 0x113C5), (0x113C7, 0x113CA), (0x113CC, 0x113D5),
    (0x113D7, 0x113D8), (0x113E1, 0x113E2), (0x116D0, 0x116E3), (0x11B00, 0x11B09),
    (0x11B60, 0x11B67), (0x11BC0, 0x11BE1), (0x11BF0, 0x11BF9), (0x11DB0, 0x11DDB),
    (0x11DE0, 0x11DE9), (0x11F00, 0x11F10), (0x11F12, 0x11F3A), (0x11F3E, 0x11F5A),
    (0x1342F, 0x1342F), (0x13440, 0x13455), (0x13460, 0x143FA), (0x16100, 0x16139),
    (0x16D40, 0x16D79), (0x16EA0, 0x16EB8), (0x16EBB, 0x16ED3), (0x16FF2, 0x16FF6),
    (0x187F8, 0x187FF), (0x18CFF, 0x18D1E), (0x18D80, 0x18DF2), (0x1B132, 0x1B132),
    (0x1B155, 0x1B155), (0x1CC00, 0x1CCFC), (0x1CD00, 0x1CEB3), (0x1CEBA, 0x1CED0),
    (0x1CEE0, 0x1CEF0), (0x1D2C0, 0x1D2D3), (0x1DF25, 0x1DF2A), (0x1E030, 0x1E06D),
    (0x1E08F, 0x1E08F), (0x1E4D0, 0x1E4F9), (0x1E5D0, 0x1E5FA), (0x1E5FF, 0x1E5FF),
    (0x1E6C0, 0x1E6DE), (0x1E6E0, 0x1E6F5), (0x1E6FE, 0x1E6FF), (0x1F6D8, 0x1F6D8),
    (0x1F6DC, 0x1F6DC), (0x1F774, 0x1F77F), (0x1F7D9, 0x1F7D9), (0x1F8B2, 0x1F8BB),
    (0x1F8C0, 0x1F8C1), (0x1F8D0, 0x1F8D8), (0x1FA54, 0x1FA57), (0x1FA75, 0x1FA77),
    (0x1FA87, 0x1FA8A), (0x1FA8E, 0x1FA8F), (0x1FAAD, 0x1FAC6), (0x1FAC8, 0x1FAC8),
    (0x1FACD, 0x1FADC), (0x1FADF, 0x1FAEA), (0x1FAEF, 0x1FAF8), (0x1FBCB, 0x1FBFA),
    # Planes 2 and 3 were sampled every 16th code point: the starts and ends between the
    # samples are those of the CJK extension blocks the samples fall in (I; H and J).
    (0x2EBF0, 0x2EE5D), (0x31350, 0x3347F),
)  # fmt: skip
"""Code points Python 3.11's data calls unassigned that the release keeps (observed on
2.1.332: every code point of the BMP and plane 1, samples of the other planes)."""
_LATER_STARTS = tuple(start for start, _ in _ASSIGNED_LATER)

_TO_LF = str.maketrans({"\r": "\n", "\u2028": "\n", "\u2029": "\n"})


def _assigned_later(cp: int) -> bool:
    at = bisect.bisect_right(_LATER_STARTS, cp) - 1
    return at >= 0 and cp <= _ASSIGNED_LATER[at][1]


@lru_cache(maxsize=4096)
def is_removed(char: str) -> bool:
    """True for a character the release drops from the loaded index."""
    cp = ord(char)
    category = unicodedata.category(char)
    if category == "Cc":
        return cp not in _KEPT_CONTROLS
    if category == "Cf":
        return cp not in _KEPT_FORMATS
    if category == "Co":
        return True
    if category == "Cn":
        return not _assigned_later(cp)
    return cp in _IGNORABLE_LETTERS_AND_MARKS


def clean_loaded_text(text: str) -> str:
    """The loaded index after the release's cleaning (before the second trim)."""
    text = text.replace("\r\n", "\n").translate(_TO_LF)
    drop = {ord(c): None for c in set(text) if is_removed(c)}
    return text.translate(drop) if drop else text
