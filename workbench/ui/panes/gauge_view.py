"""What the Gauge pane shows, as pure functions of the engine's gauge, replay and counts.

No I/O and no widgets: the pane (`gauge.py`) feeds these and lays the results out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content

from workbench.engine.context.views import NO_THRESHOLD
from workbench.engine.models import format_file_size
from workbench.ui.formatting import plural
from workbench.ui.panes.session_view import session_title, session_when
from workbench.ui.widgets.threshold_ladder import fill_style

if TYPE_CHECKING:
    from workbench.engine.context.gauge import GaugeReport
    from workbench.engine.context.replay import ReplayReport
    from workbench.engine.context.service import TokenMeasurements
    from workbench.engine.context.session_list import SessionInfo


MODEL_SOURCES = {"transcript": "from the transcript", "flag": "chosen", "default": "default model"}
WINDOW_SOURCES = {
    "default": "default",
    "1m-suffix": "1M: [1m] model suffix",
    "1m-beta": "1M: context-1m beta",
    "1m-experiment": "1M: Sonnet experiment in the global config",
    "env-cap": "capped by CLAUDE_CODE_AUTO_COMPACT_WINDOW",
    "model": "the model's own window",
}
OUTPUT_SOURCES = {
    "model-default": "model default",
    "slot-cap": "slot cap",
    "env": "CLAUDE_CODE_MAX_OUTPUT_TOKENS",
}


# --- display helpers ------------------------------------------------------------------------


def reading_content(report: GaugeReport) -> Content:
    """The headline: tokens used, percent left, and what Claude Code's footer shows."""
    state = report.state
    style = fill_style(report)
    parts: list[tuple[str, str] | str | Content] = [
        (f"{report.used:,}", f"bold {style}"),
        " tokens used  ·  ",
        (f"{state.percent_left}% left", "bold"),
    ]
    t = report.thresholds
    if state.at_blocking:
        parts.append(("  ·  at the blocking limit: the next prompt is refused", "bold $text-error"))
    elif state.above_autocompact:
        parts.append(("  ·  auto-compact is due before the next call", "bold $text-error"))
    if state.label:
        parts += ["  ·  Claude Code shows ", (f"“{state.label}”", f"italic {style}")]
    elif not state.above_warning:
        base = "auto-compact" if t.auto_compact_enabled else "the effective window"
        parts.append((f"  ·  counted down to {base}", "$foreground-muted"))
    if not t.threshold_compaction:
        parts.append(("  ·  no threshold compaction for this model", "$text-warning"))
    return Content.assemble(*parts)


def model_content(report: GaugeReport) -> Content:
    """The model, its window, the output reserve and how the gauge read the file."""
    t = report.thresholds
    read = f"read {format_file_size(report.bytes_read)} of {format_file_size(report.size_bytes)}"
    read += " from the end" if report.read_mode == "tail" else f" ({report.read_mode} read)"
    details = " · ".join(
        (
            f"model: {MODEL_SOURCES.get(report.model_source, report.model_source)}",
            f"window: {WINDOW_SOURCES.get(t.context_window_source, t.context_window_source)}",
            f"max output {t.max_output_tokens:,} "
            f"({OUTPUT_SOURCES.get(t.max_output_source, t.max_output_source)})",
            "reserve = min(max output, 20,000)",
            read,
        )
    )
    return Content.assemble(
        (report.model, "bold $text-primary"),
        "  window ",
        (f"{t.context_window:,}", "bold"),
        " − reserve ",
        (f"{t.reserved:,}", "bold"),
        " = effective ",
        (f"{t.effective_window:,}", "bold"),
        "\n",
        (details, "$foreground-muted"),
    )


def counts_content(report: GaugeReport, measurements: TokenMeasurements | None) -> Content:
    """Measured (API usage) beside the estimates, as a small table."""
    rows: list[Content] = [Content.styled("Counts", "bold")]

    def row(name: str, value: int | None, note: str, style: str = "") -> None:
        number = f"{value:>9,}" if value is not None else f"{'…':>9}"
        rows.append(
            Content.assemble(
                (f" {name:<11}", style or "$foreground-muted"),
                (number, f"bold {style}".strip()),
                (f"  {note}", "$foreground-muted"),
            )
        )

    usage = report.last_usage
    if usage is not None:
        row("measured", usage.total, "API usage, last call, input + output")
        row("estimated", report.used - usage.total, "rough, messages since")
    else:
        row("measured", None, "no API usage yet")
    row("used", report.used, report.used_method.replace("+", " + "), fill_style(report))
    if measurements is None:
        row("rough only", None, "chars ÷ 4 (counting…)")
        row("cl100k", None, "tiktoken (counting…)")
    else:
        row(
            "rough only",
            measurements.rough_estimate,
            f"{measurements.messages:,} msgs, chars ÷ 4",
        )
        if measurements.tiktoken_cl100k is None:
            row("cl100k", None, "tiktoken not installed")
        else:
            row("cl100k", measurements.tiktoken_cl100k, "tiktoken, offline")
    return Content("\n").join(rows)


def overrides_content(report: GaugeReport) -> Content:
    """Every environment variable that touches the ladder, and other switches in force."""
    t = report.thresholds
    rows: list[Content] = [Content.styled("Overrides", "bold")]
    for override in t.overrides:
        mark, style = ("✓", "$text-success") if override.applied else ("✗", "$foreground-muted")
        rows.append(
            Content.assemble(
                (f" {mark} ", style),
                (
                    f"{override.name}={override.value}",
                    "bold" if override.applied else "$foreground-muted",
                ),
                "\n",
                (f"   {override.effect or 'no effect'}", "$foreground-muted"),
            )
        )
    env_names = {override.name for override in t.overrides}
    # A model the release never compacts by threshold is not an override: the notes say it.
    switches = env_names | {NO_THRESHOLD}
    if t.auto_compact_disabled_by and t.auto_compact_disabled_by not in switches:
        rows.append(
            Content.assemble(
                (" ✓ ", "$text-success"),
                (t.auto_compact_disabled_by, "bold"),
                ("\n   auto-compact off (Claude Code's global config)", "$foreground-muted"),
            )
        )
    if t.context_window_source.startswith("1m"):
        rows.append(
            Content.assemble(
                (" ✓ ", "$text-success"),
                ("1M context", "bold"),
                (f"\n   {WINDOW_SOURCES[t.context_window_source]}", "$foreground-muted"),
            )
        )
    if len(rows) == 1:
        rows.append(Content.styled(" none: Claude Code's defaults apply", "$foreground-muted"))
    return Content("\n").join(rows)


def plot_title(
    replay: ReplayReport | None,
    report: GaugeReport | None,
    *,
    progress: float | None = None,
    cancelled: bool = False,
) -> Content:
    """The line above the plot; while the replay runs, how far it got."""
    if replay is None:
        if cancelled:
            status = "  replay cancelled · f5 runs it again"
        elif progress is not None:
            status = f"  replaying… {progress:.0%} · esc cancels"
        else:
            status = "  replaying…"
        return Content.assemble(("Context per API call", "bold"), (status, "$foreground-muted"))
    compactions = len(replay.compactions)
    parts: list[tuple[str, str] | str] = [
        ("Context per API call", "bold"),
        (
            f"  {plural(len(replay.turns), 'call')} · peak {replay.peak:,} · "
            f"{plural(compactions, 'compaction')}",
            "$foreground-muted",
        ),
    ]
    if replay.unrecorded_fires:
        first = replay.unrecorded_fires[0]
        parts.append(
            (
                f" · auto-compact would have fired before call {first.turn + 1}",
                "$text-error",
            )
        )
    return Content.assemble(*parts)


def compactions_content(replay: ReplayReport | None) -> Content:
    """One line per recorded compaction: where, how big, and what the replay makes of it."""
    if replay is None or not replay.compactions:
        return Content("")
    lines = []
    for compaction in replay.compactions:
        auto = compaction.trigger == "auto"
        size = compaction.recorded_pre_tokens or compaction.estimated_pre_tokens
        lines.append(
            Content.assemble(
                ("◆ " if auto else "◇ ", "$accent" if auto else "$secondary"),
                (f"{compaction.trigger or 'untriggered'} compaction", "bold"),
                (f" at line {compaction.line:,}, {size:,} tokens before", ""),
                (f"  {compaction.note}", "$foreground-muted"),
            )
        )
    return Content("\n").join(lines)


def engine_label(report: GaugeReport, *, following: bool) -> str:
    """For the status line: how the count was made (measured usage, estimate or both)."""
    method = {
        "usage": "measured (API usage)",
        "usage+estimate": "measured + estimate since",
        "estimate": "estimate (no API usage yet)",
    }.get(report.used_method, report.used_method)
    return f"gauge: {method}{', live' if following else ''}"


def session_label(session: SessionInfo) -> str:
    """A session in the picker."""
    return f"{session_title(session, 48)}  ·  {session_when(session)}"


def follow_content(following: bool, updates: int) -> Content:
    """Whether the transcript is followed live, and how many readings came in since."""
    if following:
        count = f" · {plural(updates, 'update')}" if updates else ""
        return Content.assemble(
            ("● ", "$text-success"), ("following", "bold"), (count, "$foreground-muted")
        )
    return Content.assemble(("○ ", "$foreground-muted"), ("not following", "$foreground-muted"))
