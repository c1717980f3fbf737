"""Token bars drawn with block characters: a value against a limit, to 1/8 of a cell."""

from __future__ import annotations

from textual.content import Content

EIGHTHS = " ▏▎▍▌▋▊▉█"
"""Left-aligned partial blocks: index n fills n/8 of a cell."""


def filled_eighths(value: int, scale: int, width: int) -> int:
    """How many eighths of `width` cells `value` fills on a bar that ends at `scale`."""
    if scale <= 0 or width <= 0 or value <= 0:
        return 0
    return min(width * 8, round(value / scale * width * 8))


def meter_bar(
    value: int,
    limit: int,
    width: int,
    *,
    fill: str = "$primary",
    track: str = "$panel",
    over: str = "$token-over-budget",
) -> Content:
    """`value` against `limit` as a bar `width` cells wide; past the limit it is all `over`.

    A value above zero always shows at least a sliver, so "small" never reads as "empty".
    """
    if width <= 0:
        return Content("")
    if value > limit:
        return Content.styled("█" * width, over)
    eighths = filled_eighths(value, limit, width)
    if value > 0:
        eighths = max(1, eighths)
    full, part = divmod(eighths, 8)
    pieces: list[tuple[str, str]] = [("█" * full, fill)]
    if part:
        pieces.append((EIGHTHS[part], f"{fill} on {track}"))
    rest = width - full - (1 if part else 0)
    if rest > 0:
        pieces.append((" " * rest, f"on {track}"))
    return Content.assemble(*pieces)


def short_tokens(value: int) -> str:
    """`950`, `12k`, `1.5k`, `167k`, `1M` for axis labels."""
    if value >= 1_000_000:
        text = f"{value / 1_000_000:.1f}".removesuffix(".0")
        return f"{text}M"
    if value >= 10_000:
        return f"{round(value / 1000)}k"
    if value >= 1_000:
        text = f"{value / 1000:.1f}".removesuffix(".0")
        return f"{text}k"
    return str(value)
