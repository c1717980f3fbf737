"""Pure render functions for the Context pane: what each call's context was made of, the
largest items now, and the project's sessions over time."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual.content import Content

from workbench.engine.context.attribution_models import (
    PLOT_GROUPS,
    AttributionReport,
    CallPoint,
    category_label,
    condensed,
)
from workbench.ui.formatting import plural
from workbench.ui.widgets.token_bars import short_tokens

if TYPE_CHECKING:
    from workbench.engine.context.session_history import SessionHistory

GUTTER = 6
GROUP_STYLE: dict[str, tuple[str, str]] = {
    "tools": ("█", "$accent"),
    "calls": ("█", "$secondary"),
    "attach": ("▚", "$warning"),  # patterned: $warning is close to $accent in some themes
    "user": ("█", "$success"),
    "assistant": ("█", "$primary"),
    "thinking": ("▓", "$primary"),
    "images": ("█", "$error"),
    "other": ("░", "$foreground-muted"),
    "overhead": ("▒", "$foreground-muted"),
}
"""Glyph and colour of each plot group."""
MEASURED = ("·", "$text-error")
"""A cell the measured prompt reaches and the estimate does not (the difference)."""
TRIGGER_MARK = {"auto": "◆", "manual": "◇", "reactive": "▲"}


def _columns(calls: Sequence[CallPoint], width: int) -> list[CallPoint]:
    """At most `width` calls: the last call of each equal run."""
    if len(calls) <= width:
        return list(calls)
    step = math.ceil(len(calls) / width)
    return [
        calls[min(len(calls) - 1, (i + 1) * step - 1)] for i in range(math.ceil(len(calls) / step))
    ]


def category_plot(report: AttributionReport, *, width: int, height: int = 10) -> Content:
    """Stacked columns, one per call (or run of calls): the categories bottom up, the measured
    prompt's excess dotted above, compactions marked under the axis."""
    if not report.calls:
        return Content.styled("No API call with usage yet: nothing to draw.", "$foreground-muted")
    height = max(3, height)
    columns = _columns(report.calls, max(1, width - GUTTER))
    top = max(max(c.estimate, c.recorded or 0) for c in columns) or 1
    stacks = []
    for call in columns:
        groups = condensed(call.categories)
        order = ["overhead", *(k for k, _n in PLOT_GROUPS if k != "overhead")]
        running, bounds = 0, []
        for key in order:
            running += groups[key]
            bounds.append((running, key))
        stacks.append((bounds, call.recorded or 0))
    rows: list[Content] = []
    for row in range(height):
        level = (height - row - 0.5) / height * top
        label = (
            short_tokens(round(top * (height - row) / height)) if row in (0, height // 2) else ""
        )
        cells: list[tuple[str, str]] = [(f"{label:>{GUTTER - 1}} ", "$foreground-muted")]
        for bounds, recorded in stacks:
            glyph: tuple[str, str] = (" ", "")
            for bound, key in bounds:
                if level < bound:
                    glyph = GROUP_STYLE[key]
                    break
            else:
                if level < recorded:
                    glyph = MEASURED
            cells.append(glyph)
        rows.append(Content.assemble(*cells))
    axis = [" " * GUTTER]
    marks = [" " * GUTTER]
    boundaries = {m.after_call: m.trigger for m in report.compactions}
    previous = 0
    for call in columns:
        hit = next((t for after, t in boundaries.items() if previous <= after < call.number), None)
        marks.append(TRIGGER_MARK.get(hit, "◆") if hit else " ")
        axis.append("─")
        previous = call.number
    rows.append(Content.styled("".join(axis), "$foreground-muted"))
    rows.append(Content.styled("".join(marks), "$accent"))
    first, last = columns[0].number, columns[-1].number
    span = f"calls {first:,}–{last:,}" + (
        f", every {math.ceil(len(report.calls) / len(columns))} shown"
        if len(columns) < len(report.calls)
        else ""
    )
    rows.append(Content.styled(" " * GUTTER + span, "$foreground-muted"))
    return Content("\n").join(rows)


def legend_content() -> Content:
    parts: list[tuple[str, str] | str] = []
    for key, name in PLOT_GROUPS:
        glyph, style = GROUP_STYLE[key]
        parts += [(glyph, style), f" {name}  "]
    parts += [
        MEASURED,
        " measured beyond the estimate  ",
        ("◆", "$accent"),
        " auto  ",
        ("◇", "$accent"),
        " manual  ",
    ]
    parts += [("▲", "$accent"), " reactive compaction"]
    return Content.assemble(*parts)


def headline_content(report: AttributionReport) -> Content:
    """Calls, compactions, and the reconciliation of the last call."""
    last = report.calls[-1] if report.calls else None
    parts: list[tuple[str, str] | str] = [
        (plural(len(report.calls), "call"), "bold"),
        f" · {plural(len(report.compactions), 'compaction')} · ",
        (f"{report.current_total:,}", "bold"),
        " tokens in context now (estimate)",
    ]
    if last is not None and last.recorded is not None and last.difference is not None:
        parts += [
            "  ·  last call's input measured ",
            (f"{last.recorded:,}", "bold"),
            ", estimated ",
            f"{last.estimate:,}",
            ", difference ",
            (
                f"{last.difference:+,}",
                "$text-warning" if abs(last.difference) > 0.05 * last.recorded else "",
            ),
        ]
    return Content.assemble(*parts)


def breakdown_content(
    report: AttributionReport, limit: int = 10, call: int | None = None
) -> Content:
    """The context now (or what call number `call` sent) by category, largest first, with a
    bar each; a call's heading reconciles it with its recorded usage."""
    point = report.calls[call - 1] if call is not None and 0 < call <= len(report.calls) else None
    if point is None:
        categories, total = report.current, report.current_total
        rows: list[Content] = [
            Content.assemble(
                ("In context now", "bold"),
                ("  keys ‘,’ and ‘.’ step through the calls", "$foreground-muted"),
            )
        ]
    else:
        categories, total = point.categories, point.estimate
        rows = [call_heading(point, len(report.calls))]
    added = added_by_call(report, call) if point is not None else {}
    total = total or 1
    for category, tokens in sorted(categories.items(), key=lambda kv: -kv[1])[:limit]:
        bar = "█" * max(1, round(tokens / total * 24))
        grew = added.get(category, 0)
        rows.append(
            Content.assemble(
                (f" {category_label(category)[:34]:<34}", ""),
                (f"{tokens:>9,} ", "bold"),
                (f"{f'+{grew:,}' if grew else '':>8} " if point else "", "$text-success"),
                (bar, "$accent"),
            )
        )
    return Content("\n").join(rows)


def added_by_call(report: AttributionReport, call: int | None) -> dict[str, int]:
    """What call number `call` sent beyond the call before it, by category."""
    return {} if call is None else report.added_since_previous(call)


def call_heading(point: CallPoint, calls: int) -> Content:
    """`Call 7 of 28 (line 41)`: what it sent, estimated against what the API measured."""
    parts: list[tuple[str, str] | str] = [
        (f"Call {point.number:,} of {calls:,}", "bold"),
        (f"  line {point.line:,}", "$foreground-muted"),
        f"  ·  estimated {point.estimate:,}",
    ]
    if point.recorded is not None and point.difference is not None:
        parts += [f", measured {point.recorded:,}, difference ", (f"{point.difference:+,}", "bold")]
    else:
        parts += [("  (no recorded usage)", "$foreground-muted")]
    return Content.assemble(*parts)


def call_items_content(report: AttributionReport, call: int | None, limit: int = 8) -> Content:
    """The items call number `call` sent, largest first, each with whether it is new with the
    call and what became of it or a compaction would do to it; capped with `and N more`."""
    if call is None or not 0 < call <= len(report.calls):
        return Content("")
    items = report.call_items(call)
    new = sum(1 for item in items if item.call == call)
    rows: list[Content] = [
        Content.assemble(
            (f"Items call {call:,} sent", "bold"),
            (
                f"  largest first · {plural(len(items), 'item')}, {new:,} new with it",
                "$foreground-muted",
            ),
        )
    ]
    for item in items[:limit]:
        rows.append(
            Content.assemble(
                " " + item.describe(len(report.calls)),
                ("  new" if item.call == call else "", "$text-success"),
            )
        )
        rows.append(
            Content.styled("    " + (item.fates_text() or "still in context"), "$foreground-muted")
        )
    if len(items) > limit:
        rows.append(Content.styled(f" … and {len(items) - limit:,} more", "$foreground-muted"))
    return Content("\n").join(rows)


def largest_content(report: AttributionReport, limit: int = 8) -> Content:
    """The biggest items still in context, each with what compaction would do to it."""
    if not report.largest:
        return Content("")
    rows: list[Content] = [
        Content.assemble(
            ("Largest items now", "bold"), ("  all still in context", "$foreground-muted")
        )
    ]
    for item in report.largest[:limit]:
        rows.append(Content.assemble((" " + item.describe(len(report.calls)), "")))
        if item.fates_text():
            rows.append(Content.styled("    " + item.fates_text(), "$foreground-muted"))
    return Content("\n").join(rows)


def history_plot(history: SessionHistory, *, width: int, height: int = 5) -> Content:
    """One column per session (newest on the right): its peak against its auto-compact
    threshold, the threshold as a line, compactions marked underneath."""
    if not history.sessions:
        return Content.styled("No sessions yet.", "$foreground-muted")
    sessions = list(history.sessions)[-max(1, width - GUTTER) :]
    shares = [s.peak_share or 0.0 for s in sessions]
    top = max(1.0, *shares)
    rows: list[Content] = []
    for row in range(height):
        level = (height - row - 0.5) / height * top
        at_line = abs(level - 1.0) <= top / height / 2
        label = "auto" if at_line else ""
        cells: list[tuple[str, str]] = [(f"{label:>{GUTTER - 1}} ", "$foreground-muted")]
        for share in shares:
            if level < share:
                style = (
                    "$text-error"
                    if share >= 1.0
                    else "$text-warning"
                    if share >= 0.88
                    else "$text-success"
                )
                cells.append(("█", style))
            else:
                cells.append(("─" if at_line else " ", "$foreground-muted"))
        rows.append(Content.assemble(*cells))
    marks: list[tuple[str, str]] = [(" " * GUTTER, "")]
    for s in sessions:
        c = s.compactions
        mark = (
            "▲" if c.get("reactive") else "◆" if c.get("auto") else "◇" if c.get("manual") else " "
        )
        marks.append((mark, "$accent"))
    rows.append(Content.assemble(*marks))
    rows.append(Content.styled(history_span(history), "$foreground-muted"))
    totals = history.totals()
    rows.append(
        Content.styled(
            f"{plural(totals['sessions'], 'session')} · compactions {totals['auto']} auto, {totals['manual']} manual, "
            f"{totals['reactive']} reactive · {plural(totals['restored_files'], 'file')} re-attached · "
            f"{short_tokens(totals['tokens_in'])} in, {short_tokens(totals['tokens_out'])} out",
            "$foreground-muted",
        )
    )
    return Content("\n").join(rows)


def history_span(history: SessionHistory) -> str:
    """When the sessions ran and how many reached each threshold."""
    days = [
        (s.first_timestamp or s.last_timestamp or "")[:10]
        for s in history.sessions
        if s.first_timestamp or s.last_timestamp
    ]
    span = f"{min(days)} to {max(days)}" if days else "no dates recorded"
    reached = {
        name: sum(1 for s in history.sessions if s.first_crossings.get(key) is not None)
        for name, key in (("warning", "warning"), ("auto-compact", "autocompact"))
    }
    return f"{span} · reached the warning threshold: {reached['warning']}, the auto-compact threshold: {reached['auto-compact']}"
