"""`engine.context`: transcripts, the gauge, replays, compaction previews and session memory
for one project, with paths and environment taken from the engine."""

from __future__ import annotations

import _thread  # threading.Lock itself, without importing threading (the status line)
import os
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.engine.context.thresholds import GlobalConfig, Thresholds, compute_thresholds
from workbench.engine.errors import NotFoundError, UserInputError
from workbench.engine.records import Record

if TYPE_CHECKING:
    from datetime import datetime

    from workbench.engine.context.attribution_models import AttributionReport
    from workbench.engine.context.compaction.preview import CompactPreview
    from workbench.engine.context.compaction_log import CompactionLog
    from workbench.engine.context.follow import TranscriptFollower
    from workbench.engine.context.gauge import GaugeReport
    from workbench.engine.context.replay import ReplayReport
    from workbench.engine.context.session_history import SessionHistory
    from workbench.engine.context.session_list import SessionInfo
    from workbench.engine.context.session_memory import SessionMemoryReport
    from workbench.engine.context.session_model import SessionModel
    from workbench.engine.context.statusline import StatusFigures
    from workbench.engine.context.transcript import Transcript
    from workbench.engine.context.views import GaugeView, SessionNotes
    from workbench.engine.engine import Engine
    from workbench.engine.profiles import BehaviourProfile
    from workbench.engine.profiles.detect import ResolvedVersion
    from workbench.engine.progress import ProgressCallback

_MANAGED_CLAUDE_MD = "/etc/claude-code/CLAUDE.md"


class StatusLine(Record):
    """One status line: the text, its figures, and the gauge reading when one was made."""

    line: str
    figures: StatusFigures
    report: GaugeReport | None = None
    claude: ResolvedVersion | None = None
    """The release whose rules the line follows."""

    def to_json(self) -> dict[str, Any]:
        data = self.report.to_json() if self.report else {}
        data.update(self.claude.to_json() if self.claude else {})
        data.update(self.figures.to_json())
        data["line"] = self.line
        return data


class TokenMeasurements(Record):
    """The same messages counted three ways, side by side."""

    messages: int
    claude_code_estimate: int
    """`tokenCountWithEstimation`: what Claude Code itself uses."""
    rough_estimate: int
    """The rough estimate of every message (no usage anchor)."""
    tiktoken_cl100k: int | None
    api_count: int | None
    api_error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "messages": self.messages,
            "claude_code_estimate": self.claude_code_estimate,
            "rough_estimate": self.rough_estimate,
            "tiktoken_cl100k": self.tiktoken_cl100k,
            "api_count": self.api_count,
            "api_error": self.api_error,
        }


class ContextService:
    """Claude Code's view of the context window for the engine's project."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._thresholds: dict[tuple[str, tuple[str, ...], str], Thresholds] = {}
        self._sessions: dict[str, tuple[tuple[int, int], SessionInfo]] = {}
        # One session model at a time, shared by every caller (panes read it in threads).
        self._model: SessionModel | None = None
        self._model_lock = _thread.allocate_lock()

    # --- configuration --------------------------------------------------------------------

    @property
    def env(self) -> Mapping[str, str]:
        return self.engine.env

    @property
    def transcripts_dir(self) -> str:
        return self.engine.locations.transcripts_dir

    @cached_property
    def global_config(self) -> GlobalConfig:
        """Claude Code's global config (auto-compact switch, 1M experiment)."""
        from workbench.engine.context.thresholds import load_global_config

        return load_global_config(self.env, self.engine.locations.config_home)

    def thresholds(
        self,
        model: str | None = None,
        *,
        betas: tuple[str, ...] = (),
        profile: BehaviourProfile | None = None,
    ) -> Thresholds:
        """The ladder for `model` (default: the release's default model) under this engine's
        environment and `profile`'s rules (default: the engine's release); `betas` are the
        API betas Claude Code was started with (`--betas`)."""
        profile = profile or self.engine.profile
        rules = profile.models
        name = rules.resolve_alias(model) if model else rules.default_model
        key = (name, tuple(betas), profile.version)
        if key not in self._thresholds:
            self._thresholds[key] = compute_thresholds(
                name, env=self.env, config=self.global_config, betas=tuple(betas), profile=profile
            )
        return self._thresholds[key]

    @cached_property
    def compaction_log(self) -> CompactionLog:
        """Real compactions of this project's sessions: PreCompact snapshots and the loss
        reports PostCompact made of them."""
        from workbench.engine.context.compaction_log import CompactionLog

        return CompactionLog(self.engine)

    def claude_for(self, transcript: str | os.PathLike[str] | None) -> ResolvedVersion:
        """Which release's rules apply to `transcript` (see `Engine.claude_for`)."""
        return self.engine.claude_for(transcript)

    # --- transcripts ----------------------------------------------------------------------

    def sessions(self) -> list[SessionInfo]:
        """The project's sessions, newest first (unchanged files are not re-read)."""
        from workbench.engine.context.session_list import session_files, session_info

        out: list[SessionInfo] = []
        for path in session_files(self.transcripts_dir):
            try:
                stat = path.stat()
            except OSError:
                continue
            key = (stat.st_size, stat.st_mtime_ns)
            cached = self._sessions.get(str(path))
            if cached is None or cached[0] != key:
                cached = (key, session_info(path))
                self._sessions[str(path)] = cached
            out.append(cached[1])
        return out

    def resolve_transcript(
        self, transcript: str | None = None, *, session: str | None = None, latest: bool = False
    ) -> Path:
        """A transcript path from a path, a session id (or unique prefix), or the newest."""
        if transcript:
            candidate = Path(transcript).expanduser()
            if candidate.exists():
                return candidate
            if os.sep in transcript or transcript.endswith(".jsonl"):
                raise NotFoundError(f"no transcript at {transcript}")
            session = transcript  # a bare name: treat it as a session id
        # Imported here: a path (the status line's case) needs no session list.
        from workbench.engine.context.session_list import session_files

        files = session_files(self.transcripts_dir)
        if session:
            if "/" in session or session in (".", ".."):
                raise UserInputError(f"not a session id: {session!r}")
            exact = [p for p in files if p.stem == session]
            matches = exact or [p for p in files if p.stem.startswith(session)]
            if len(matches) == 1:
                return matches[0]
            if not matches:
                raise NotFoundError(f"no session {session!r} in {self.transcripts_dir}")
            raise UserInputError(
                f"session prefix {session!r} matches {len(matches)} sessions; give more of it"
            )
        if not files:
            raise NotFoundError(f"no sessions for this project in {self.transcripts_dir}")
        return files[0]

    def load(
        self, path: str | os.PathLike[str], *, on_progress: ProgressCallback | None = None
    ) -> Transcript:
        """Read a whole transcript (`on_progress`: see `Transcript.load`)."""
        from workbench.engine.context.transcript import Transcript

        return Transcript.load(path, on_progress=on_progress)

    def session(
        self, transcript: str | os.PathLike[str], *, on_progress: ProgressCallback | None = None
    ) -> SessionModel:
        """The session model of `transcript`, read once in one streamed pass and shared:
        the current messages, the model, the message count and the notes' trigger points.

        Only the newest model asked for is kept (choosing another session releases the
        last); a file that changed since is read again. Thread-safe: callers asking at once
        wait for one read. `on_progress` hears the read when one is needed."""
        from workbench.engine.context.session_model import file_key, read_session_model

        path = str(Path(transcript))
        with self._model_lock:
            held = self._model
            if held is not None and held.path == path and held.key == file_key(path):
                return held
            self._model = None  # let the old one go before reading the new one
            held = read_session_model(path, on_progress=on_progress)
            self._model = held
            return held

    def release_session(self, transcript: str | os.PathLike[str] | None = None) -> None:
        """Drop the shared session model (only if it is `transcript`'s, when given)."""
        with self._model_lock:
            if transcript is None or (
                self._model is not None and self._model.path == str(Path(transcript))
            ):
                self._model = None

    # --- the gauge ------------------------------------------------------------------------

    def gauge(
        self,
        transcript: str | None = None,
        *,
        session: str | None = None,
        latest: bool = False,
        model: str | None = None,
        betas: tuple[str, ...] = (),
        compactions: bool = True,
    ) -> GaugeReport:
        """The gauge for a transcript, read from its end (`compactions=False` leaves out the
        list of earlier compactions, which needs one scan of the whole file)."""
        from workbench.engine.context.gauge import (
            gauge_from_messages,
            read_gauge_tail,
            tail_problems,
        )

        path = self.resolve_transcript(transcript, session=session, latest=latest)
        claude = self.claude_for(path)
        tail = read_gauge_tail(path, compactions=compactions)
        chosen = model or tail.model
        source = "flag" if model else ("transcript" if tail.model else "default")
        return gauge_from_messages(
            tail.messages,
            self.thresholds(chosen, betas=betas, profile=claude.profile),
            transcript=str(path),
            session_id=path.stem,
            model_source=source,
            compactions=tail.compactions,
            size_bytes=tail.size_bytes,
            bytes_read=tail.bytes_read,
            read_mode=tail.mode,
            problems=tail_problems(tail),
            claude=claude,
        )

    def follower(
        self,
        transcript: str | None = None,
        *,
        session: str | None = None,
        latest: bool = False,
        model: str | None = None,
    ) -> TranscriptFollower:
        """A follower that keeps the gauge current as the transcript grows."""
        from workbench.engine.context.follow import TranscriptFollower

        path = self.resolve_transcript(transcript, session=session, latest=latest)
        claude = self.claude_for(path)

        def ladder(name: str | None) -> Thresholds:
            return self.thresholds(name, profile=claude.profile)

        return TranscriptFollower(
            path,
            ladder,
            model_override=model,
            default_model=claude.profile.models.default_model,
            claude=claude,
        )

    def statusline(
        self,
        payload: Mapping[str, Any],
        *,
        fmt: str | None = None,
        color: bool = False,
        badge: bool = True,
    ) -> StatusLine:
        """The status line for Claude Code's status-line payload: its own `context_window`
        figures when sent, else the transcript read from its end."""
        from workbench.engine.context import statusline as sl
        from workbench.engine.context.views import DEFAULT_FORMAT

        fmt = DEFAULT_FORMAT if fmt is None else fmt
        sl.check_format(fmt)
        info = sl.read_payload(payload)
        # The payload names the Claude Code that is running: its rules, under auto.
        claude = self.engine.versions.for_reported(info.version, info.transcript)
        profile = claude.profile
        report = None
        model = info.model_id
        if info.used is not None:
            used, source = info.used, "payload"
        elif info.transcript and Path(info.transcript).is_file():
            report = self.gauge(info.transcript, model=model, compactions=False)
            model = model or report.model
            used, source = report.used, "transcript"
        elif info.transcript:
            used, source = 0, "new"
        else:
            raise UserInputError(
                "the status-line input has neither context_window figures nor a transcript_path"
            )
        model = model or profile.models.default_model
        status = sl.figures(
            used,
            self.window_thresholds(model, info.window, profile=profile),
            model_id=model,
            model_name=info.model_name,
            source=source,
            badge=sl.index_badge(self._index_truncation) if badge else None,
        )
        return StatusLine(sl.render(fmt, status, color=color), status, report, claude)

    def window_thresholds(
        self, model: str, window: int | None, *, profile: BehaviourProfile | None = None
    ) -> Thresholds:
        """The ladder for `model`, moved to the window Claude Code reports when it differs.

        Transcripts never record a `[1m]` suffix, so a payload saying 1,000,000 is the only way
        to know; a smaller window is modelled as Claude Code's own window cap."""
        profile = profile or self.engine.profile
        ladder = self.thresholds(model, profile=profile)
        if window is None or window == ladder.context_window:
            return ladder
        if window >= 1_000_000 and "[1m]" not in model.lower():
            ladder = self.thresholds(model + "[1m]", profile=profile)
        if window < ladder.context_window:
            env = dict(self.env)
            cap = env.get("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "")
            current = int(cap) if cap.isdigit() and int(cap) > 0 else None
            env["CLAUDE_CODE_AUTO_COMPACT_WINDOW"] = str(min(window, current or window))
            ladder = compute_thresholds(
                profile.models.resolve_alias(ladder.model),
                env=env,
                config=self.global_config,
                profile=profile,
            )
        return ladder

    def _index_truncation(self, team: bool) -> Any:
        """How MEMORY.md (or the team one) is cut, or None when it cannot be cut."""
        loc = self.engine.locations
        path = loc.team_entrypoint if team else loc.entrypoint
        from workbench.engine.userfiles import INDEX_LIMIT, read_bytes

        try:  # a regular file only: a pipe named MEMORY.md must not stall the status line
            data = read_bytes(path, INDEX_LIMIT, "MEMORY.md")
        except OSError:
            return None
        # A UTF-16 length never exceeds the UTF-8 byte count, and loading only removes text:
        # a small file cannot be cut, and the index module need not even be imported.
        if len(data) <= 25_000 and data.count(b"\n") < 200:
            return None
        from workbench.engine.memories.index import strip_for_loading, truncate_entrypoint

        return truncate_entrypoint(strip_for_loading(data.decode("utf-8", errors="replace")))

    # --- analysis -------------------------------------------------------------------------

    def replay(
        self,
        transcript: str | os.PathLike[str],
        *,
        model: str | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> ReplayReport:
        """Turn-by-turn context sizes and where auto-compaction would fire (one streaming
        pass over the file; `on_progress` hears the bytes read)."""
        from workbench.engine.context.replay import replay_file

        claude = self.claude_for(transcript)

        def ladder(name: str | None) -> Thresholds:
            return self.thresholds(model or name, profile=claude.profile)

        return replay_file(
            transcript,
            thresholds_for=ladder,
            default_model=model or claude.profile.models.default_model,
            claude=claude,
            on_progress=on_progress,
        )

    def attribution(
        self,
        transcript: str | os.PathLike[str],
        *,
        model: str | None = None,
        now: datetime | None = None,
        previews: bool = True,
        keep_items: bool = True,
        spend: bool = False,
    ) -> AttributionReport:
        """What each API call's context was made of, by category and by item, reconciled
        with the recorded usage; the largest items now and what compaction would do to them
        (one streaming pass over the file). `spend` adds what every call cost, the
        subagents' files beside the transcript read too."""
        import dataclasses

        from workbench.engine.context.attribution import attribute_file
        from workbench.engine.context.spend import SpendTally, subagent_files

        claude = self.claude_for(transcript)

        def ladder(name: str | None) -> Thresholds:
            return self.thresholds(model or name, profile=claude.profile)

        loc = self.engine.locations
        options = (
            {
                "project_root": loc.project_root,
                "excluded_paths": self._memory_file_paths(),
                "plan_dir": os.path.join(loc.config_home, "plans"),
            }
            if previews
            else None
        )
        tally = SpendTally() if spend else None
        report = attribute_file(
            transcript,
            thresholds_for=ladder,
            default_model=model or claude.profile.models.default_model,
            claude=claude,
            now=now,
            previews=options,
            keep_items=keep_items,
            spend=tally,
        )
        if tally is None:
            return report
        for path in subagent_files(transcript):
            tally.add_file(path)
        return dataclasses.replace(report, spend=tally.finish())

    def session_history(self, *, cache: bool = True) -> SessionHistory:
        """Every session of the project over time: peaks, compactions, spend, thresholds
        (summaries cached by file size and time under the workbench's home)."""
        from workbench.engine.context.session_history import build_history

        return build_history(self, cache=cache)

    def measure(
        self,
        transcript: str | os.PathLike[str],
        *,
        tiktoken: bool = True,
        api: bool = False,
        model: str | None = None,
    ) -> TokenMeasurements:
        """Count the messages after the last boundary with Claude Code's estimate, cl100k
        and (with a key) the count-tokens endpoint."""
        from workbench.engine.context.tokens import (
            rough_tokens_for_messages,
            tiktoken_count_messages,
            token_count_with_estimation,
        )

        loaded = self.session(transcript)
        messages = loaded.current_messages()
        api_count = None
        api_error = None
        if api:
            import asyncio

            from workbench.engine.context.tokens import api_count_tokens
            from workbench.engine.llm.errors import LLMError

            try:
                fallback = self.claude_for(transcript).profile.models.default_model
                api_count = asyncio.run(
                    api_count_tokens(
                        messages, model=model or loaded.model or fallback, env=self.env
                    )
                )
            except LLMError as exc:
                api_error = str(exc)
        return TokenMeasurements(
            messages=len(messages),
            claude_code_estimate=token_count_with_estimation(messages),
            rough_estimate=rough_tokens_for_messages(messages),
            tiktoken_cl100k=tiktoken_count_messages(messages) if tiktoken else None,
            api_count=api_count,
            api_error=api_error,
        )

    def compact_preview(
        self,
        transcript: str | os.PathLike[str],
        *,
        session_memory_file: str | None = None,
        last_summarized: str | None = None,
        model: str | None = None,
        summary_file: str | None = None,
        ptl_gap: int | None = None,
        include_request: bool = False,
        now: datetime | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> CompactPreview:
        """Every compaction previewed on the transcript's current messages. `on_progress`
        hears the transcript being read, then the preview being built; raising
        `OperationCancelled` from it stops the work."""
        from workbench.engine.context.compaction.preview import build_compact_preview
        from workbench.engine.context.session_memory import effective_template
        from workbench.engine.progress import Reporter

        loaded = self.session(transcript, on_progress=on_progress)
        Reporter(on_progress, "previewing", None, unit="steps")(0, force=True)
        messages = loaded.current_messages()
        if not messages:
            # Claude Code refuses to compact no messages; a preview would invent a compaction.
            raise UserInputError(
                f"nothing to compact: {loaded.path} holds no conversation messages "
                "(it is empty, or none of its lines could be read)"
            )
        notes_path = session_memory_file or str(
            Path(loaded.path).with_suffix("") / "session-memory" / "summary.md"
        )
        notes = _read_optional(notes_path)
        if session_memory_file and notes is None:
            raise NotFoundError(f"no session-memory file at {session_memory_file}")
        summary = None
        if summary_file:
            summary = _read_optional(summary_file)
            if summary is None:
                raise NotFoundError(f"no summary file at {summary_file}")
        template, _ = effective_template(self.engine.locations.config_home)
        loc = self.engine.locations
        claude = self.claude_for(loaded.path)
        return build_compact_preview(
            messages,
            thresholds=self.thresholds(model or loaded.model, profile=claude.profile),
            env=self.env,
            notes=notes,
            notes_path=notes_path if notes is not None else None,
            template=template,
            last_summarized_uuid=last_summarized,
            transcript_path=loaded.path,
            now=now or _now(),
            project_root=loc.project_root,
            excluded_paths=self._memory_file_paths(),
            plan_dir=os.path.join(loc.config_home, "plans"),
            skill_dirs=(
                os.path.join(loc.project_root, ".claude", "skills"),
                os.path.join(loc.config_home, "skills"),
            ),
            summary=summary,
            summary_source=summary_file,
            ptl_gap=ptl_gap,
            include_request=include_request,
            claude=claude,
        )

    def _memory_file_paths(self) -> list[str]:
        """CLAUDE.md-type files Claude Code loads anyway (never restored as attachments)."""
        loc = self.engine.locations
        return [
            os.path.join(loc.config_home, "CLAUDE.md"),
            os.path.join(loc.project_root, "CLAUDE.md"),
            os.path.join(loc.project_root, ".claude", "CLAUDE.md"),
            os.path.join(loc.project_root, "CLAUDE.local.md"),
            _MANAGED_CLAUDE_MD,
            loc.entrypoint,
            loc.team_entrypoint,
        ]

    # --- session memory -------------------------------------------------------------------

    def session_memory_path(self, session_id: str) -> str:
        """`<projects>/<project>/<session>/session-memory/summary.md`."""
        return self.engine.locations.session_memory_path(session_id)

    def session_memory(
        self,
        *,
        session: str | None = None,
        file: str | None = None,
        trigger: str | None = None,
    ) -> SessionMemoryReport:
        """The notes of a session (default: the newest) against their limits; with `trigger`,
        also where an update would fire over that transcript (any transcript path, or a
        session of the project). With only `trigger`, the notes are that session's own."""
        from dataclasses import replace

        from workbench.engine.context.session_memory import read_session_memory

        trigger_path = self.resolve_transcript(trigger) if trigger else None
        if file:
            path = file
        elif session is None and trigger_path is not None:
            path = str(trigger_path.with_suffix("") / "session-memory" / "summary.md")
        else:
            transcript = self.resolve_transcript(session=session, latest=session is None)
            path = str(transcript.with_suffix("") / "session-memory" / "summary.md")
        report = read_session_memory(path, self.engine.locations.config_home)
        if file and not report.exists:
            # A file the user named is bad input when absent (as compact-preview says it);
            # a session's own notes that are not written yet are a state, reported.
            raise NotFoundError(f"no session-memory file at {file}")
        if trigger_path is not None:
            report = replace(report, trigger=self.session(trigger_path).trigger)
        return report

    # --- view models (what the Session and Gauge panes show) -----------------------------

    def session_notes(self, session: SessionInfo) -> SessionNotes:
        """The notes of `session` and where updates would fire over its transcript."""
        from dataclasses import replace

        from workbench.engine.context.views import SessionNotes

        report = self.session_memory(session=session.session_id)
        model = self.session(self.resolve_transcript(session=session.session_id))  # shared
        return SessionNotes(session, replace(report, trigger=model.trigger), model.message_count)

    def gauge_view(self, session_id: str | None = None, *, measure: bool = True) -> GaugeView:
        """The Gauge pane's whole view of a session (default: the newest), read at once; the
        pane itself reads the parts in workers as they are needed."""
        from workbench.engine.context.views import GaugeView

        sessions = tuple(self.sessions())
        report = self.gauge(session=session_id, latest=session_id is None)
        path = report.transcript or ""
        replay = self.replay(path)
        measurements = self.measure(path, tiktoken=True) if measure else None
        return GaugeView(sessions, report, replay, measurements)


def _read_optional(path: str) -> str | None:
    """A small text file Claude Code wrote (notes, a summary); None when there is none.
    A pipe, a device or an oversized file is a one-line error, never a wait."""
    from workbench.engine.userfiles import NOTES_LIMIT, read_text

    if os.path.isdir(path):
        return None
    try:
        return read_text(
            path, NOTES_LIMIT, "a session-memory or summary file", universal_newlines=True
        )
    except (FileNotFoundError, NotADirectoryError):
        return None


def _now() -> datetime:
    from datetime import UTC, datetime

    return datetime.now(tz=UTC)
