"""Dream: consolidating the memory folder from recent sessions (spec 02 §8.3–8.4).

A dream is a forked agent with the memory-agent tools and a four-phase prompt (orient, gather
recent signal, consolidate, prune and index). Claude Code's automatic dream waits until a day
has passed since the last consolidation and at least five sessions have happened since; the
last consolidation time is the mtime of `<memory>/.consolidate-lock`, whose body names the
process consolidating now. `workbench dream` is the manual form: it reports those gates, takes
the lock, runs the agent, and queues its changes for review (or applies them with `--apply`,
or only shows the diff with `--dry-run`). A failed run rolls the lock back.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.engine.agents.dream_lock import ConsolidationLock, LockState
from workbench.engine.agents.fork import FileChange, ForkRun, WriteMode, run_fork, settle_writes
from workbench.engine.agents.permissions import create_auto_mem_can_use_tool
from workbench.engine.agents.prompt import prompt_for_engine
from workbench.engine.agents.tools import Workspace, tool_definitions
from workbench.engine.envflags import is_truthy, positive_int
from workbench.engine.errors import ActionRequired
from workbench.engine.wording import plural

if TYPE_CHECKING:
    from workbench.engine.engine import Engine

MIN_HOURS_DEFAULT = 24.0
MIN_SESSIONS_DEFAULT = 5
SESSION_SCAN_INTERVAL_MS = 10 * 60 * 1000
DREAM_MAX_TURNS = 25
"""Claude Code sets no turn cap for dreams; the workbench bounds cost with a generous one."""
MAX_OUTPUT_TOKENS = 16_000
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)


def consolidation_prompt(memory_root: str, transcript_dir: str, extra: str | None = None) -> str:
    """`buildConsolidationPrompt`: the four phases, in our own words."""
    text = f"""# Dream: memory consolidation

This run is a dream: a quiet review of the memory files. Fold what recent sessions taught \
into well-organised, lasting memories, so that future sessions get their bearings quickly and \
accurately.

Memory folder: `{memory_root}`
Session transcripts: `{transcript_dir}` (large JSONL files; search them narrowly, never read \
them whole)

## Phase 1: Orient

- List the memory folder to see what it holds.
- Read `MEMORY.md` to see the current index.
- Skim the topic files, so you improve what exists instead of writing near-duplicates.
- If there are `logs/` or `sessions/` folders, look over their recent entries.

## Phase 2: Gather recent signal

Look for new information worth keeping, roughly in this order:

1. Daily logs (`logs/YYYY/MM/YYYY-MM-DD.md`), when they exist: the raw stream of notes.
2. Memories that have drifted: facts that contradict what you can see now.
3. Transcript search, only for things you already suspect matter, with a narrow term:
   `grep -rn "<narrow term>" {transcript_dir}/ --include="*.jsonl" | tail -50`

Do not read transcripts end to end; look only for what you have a reason to check.

## Phase 3: Consolidate

For each thing worth remembering, write or update a memory file at the top level of the \
memory folder, in the memory file format and with the types your system prompt describes. \
Concentrate on:

- merging new signal into existing topic files rather than adding near-duplicates;
- turning relative dates ("yesterday", "last week") into absolute ones, so they still make \
sense later;
- deleting facts that turned out to be wrong: when something you see now disproves an old \
memory, fix it at the source.

## Phase 4: Prune and index

Keep `MEMORY.md` under 200 lines and under about 25 KB. It is an index, not a store: each \
entry is one line under about 150 characters, of the form `- [Title](file.md) — one-line \
hook`, and memory content never goes into it.

- Remove pointers to memories that are stale, wrong or superseded.
- Shorten any index line over about 200 characters by moving its detail into the topic file.
- Add pointers for memories that are new or have become important.
- Resolve contradictions: when two files disagree, correct the wrong one.

---

End with a short summary of what you consolidated, updated or pruned. If nothing needed to \
change because the memories are already in good shape, say so."""
    if extra:
        text += f"\n\n## Additional context\n\n{extra}"
    return text


def dream_extra(session_ids: Sequence[str]) -> str:
    """The `extra` block of an automatic dream: tool limits and the sessions to look at."""
    lines = [
        "Bash may only run commands that read (ls, find, grep, cat, stat, wc, head, tail and "
        "the like); anything that writes, moves or deletes is refused. Edit and Write work "
        "only inside the memory folder.",
        "",
        f"Sessions since the last consolidation ({len(session_ids)}):",
        *(f"- {sid}" for sid in session_ids),
    ]
    return "\n".join(lines)


# --- settings and gates ------------------------------------------------------------------------


@dataclass(frozen=True)
class DreamSettings:
    """`autoDreamEnabled`, the `tengu_onyx_plover` config and assistant mode, made explicit.

    Environment overrides: `WORKBENCH_DREAM_ENABLED` (the server-side flag),
    `WORKBENCH_DREAM_MIN_HOURS`, `WORKBENCH_DREAM_MIN_SESSIONS` (positive values only).
    """

    setting_enabled: bool | None = None
    """The `autoDreamEnabled` setting, when defined (it wins over the flag)."""
    flag_enabled: bool = False
    min_hours: float = MIN_HOURS_DEFAULT
    min_sessions: int = MIN_SESSIONS_DEFAULT
    kairos_active: bool = False

    @property
    def enabled(self) -> bool:
        return self.setting_enabled if self.setting_enabled is not None else self.flag_enabled

    @classmethod
    def from_engine(cls, engine: Engine) -> DreamSettings:
        from workbench.engine.claude_paths import load_settings

        locations = engine.locations
        settings = load_settings(
            locations.config_home,
            locations.project_root,
            policy_settings=engine.env.get("WORKBENCH_POLICY_SETTINGS"),
        )
        setting = settings.merged("autoDreamEnabled")
        hours = positive_int(engine.env, "WORKBENCH_DREAM_MIN_HOURS")
        sessions = positive_int(engine.env, "WORKBENCH_DREAM_MIN_SESSIONS")
        return cls(
            setting_enabled=setting if isinstance(setting, bool) else None,
            flag_enabled=is_truthy(engine.env.get("WORKBENCH_DREAM_ENABLED")),
            min_hours=float(hours) if hours else MIN_HOURS_DEFAULT,
            min_sessions=sessions or MIN_SESSIONS_DEFAULT,
        )


@dataclass(frozen=True)
class DreamGates:
    """Would Claude Code's automatic dream fire now, and why or why not."""

    enabled: bool
    auto_memory_enabled: bool
    remote: bool
    kairos_active: bool
    last_consolidated_ms: float
    hours_since: float | None
    """None when memory was never consolidated."""
    min_hours: float
    time_ok: bool
    sessions: tuple[str, ...]
    min_sessions: int
    sessions_ok: bool
    lock: LockState
    gates_known: bool = True
    """False when the release in use was seen not to dream where these gates say it would."""
    notes: tuple[str, ...] = ()

    @property
    def would_fire(self) -> bool:
        return (
            self.enabled
            and self.auto_memory_enabled
            and not self.remote
            and not self.kairos_active
            and self.time_ok
            and self.sessions_ok
            and not self.lock.held
        )

    def reasons(self) -> list[str]:
        """Why the automatic dream would not fire (empty when it would)."""
        out = []
        if not self.enabled:
            out.append("automatic dream is off (autoDreamEnabled / the server-side flag)")
        if not self.auto_memory_enabled:
            out.append("auto memory is disabled")
        if self.remote:
            out.append("remote mode")
        if self.kairos_active:
            out.append("assistant mode uses the nightly /dream instead")
        if not self.time_ok:
            out.append(f"only {self.hours_since:.1f} h since the last consolidation")
        if not self.sessions_ok:
            out.append(f"{len(self.sessions)} of {self.min_sessions} sessions since then")
        if self.lock.held:
            out.append(f"process {self.lock.holder_pid} is consolidating right now")
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "would_fire": self.would_fire,
            "reasons": self.reasons(),
            "enabled": self.enabled,
            "auto_memory_enabled": self.auto_memory_enabled,
            "remote": self.remote,
            "kairos_active": self.kairos_active,
            "last_consolidated_ms": self.last_consolidated_ms,
            "hours_since": self.hours_since,
            "min_hours": self.min_hours,
            "time_ok": self.time_ok,
            "sessions": list(self.sessions),
            "min_sessions": self.min_sessions,
            "sessions_ok": self.sessions_ok,
            "lock": self.lock.to_json(),
            "gates_known": self.gates_known,
            "notes": list(self.notes),
        }


def sessions_since(
    transcripts_dir: str, since_ms: float, *, current_session: str | None = None
) -> list[str]:
    """Sessions (`<uuid>.jsonl`) modified after `since_ms`, newest first, minus the current."""
    from workbench.engine.context.session_list import session_files

    out = []
    for path in session_files(transcripts_dir):
        if not _UUID.match(path.stem) or path.stem == current_session:
            continue
        try:
            mtime_ms = path.stat().st_mtime_ns / 1_000_000
        except OSError:
            continue
        if mtime_ms > since_ms:
            out.append(path.stem)
    return out


class SessionScanThrottle:
    """Claude Code scans the session list at most every 10 minutes per process."""

    def __init__(self) -> None:
        self.last_scan_ms: float | None = None

    def allow(self, now_ms: float) -> bool:
        if self.last_scan_ms is not None and now_ms - self.last_scan_ms < SESSION_SCAN_INTERVAL_MS:
            return False
        self.last_scan_ms = now_ms
        return True


def evaluate_gates(
    engine: Engine,
    settings: DreamSettings,
    lock: ConsolidationLock,
    *,
    now_ms: float | None = None,
    current_session: str | None = None,
) -> DreamGates:
    """The automatic dream's gates, in order: enabled, time, sessions, lock."""
    now = time.time() * 1000 if now_ms is None else now_ms
    last = lock.last_consolidated_ms()
    hours = (now - last) / 3_600_000 if last > 0 else None
    sessions = sessions_since(
        engine.locations.transcripts_dir, last, current_session=current_session
    )
    return DreamGates(
        enabled=settings.enabled,
        auto_memory_enabled=engine.locations.auto_memory_enabled,
        remote=is_truthy(engine.env.get("CLAUDE_CODE_REMOTE")),
        kairos_active=settings.kairos_active,
        last_consolidated_ms=last,
        hours_since=hours,
        min_hours=settings.min_hours,
        time_ok=hours is None or hours >= settings.min_hours,
        sessions=tuple(sessions),
        min_sessions=settings.min_sessions,
        sessions_ok=len(sessions) >= settings.min_sessions,
        lock=lock.state(),
        gates_known=engine.profile.dream.gates_known,
        notes=engine.profile.dream.notes,
    )


# --- running -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class DreamResult:
    """What `workbench dream` did."""

    status: str
    """`ran`, `dry_run` (request shown, nothing sent) or `blocked` (the lock is held)."""
    engine: str
    mode: str
    gates: DreamGates
    reason: str
    prompt: str
    request: dict[str, Any] | None = None
    run: ForkRun | None = None
    changes: tuple[FileChange, ...] = ()
    lock_prior_ms: float | None = None
    lock_rolled_back: bool = False
    notice: str = ""

    @property
    def refused(self) -> list[FileChange]:
        return [c for c in self.changes if c.outcome == "refused"]

    def to_json(self) -> dict[str, Any]:
        run = self.run.to_json() if self.run else {}
        return {
            "status": self.status,
            "engine": self.engine,
            "mode": self.mode,
            "reason": self.reason,
            "notice": self.notice,
            "gates": self.gates.to_json(),
            "lock_prior_ms": self.lock_prior_ms,
            "lock_rolled_back": self.lock_rolled_back,
            "turns": run.get("turns", 0),
            "max_turns": DREAM_MAX_TURNS,
            "stopped": run.get("stopped"),
            "written_paths": run.get("written_paths", []),
            "memory_paths": run.get("memory_paths", []),
            "saved_paths": run.get("saved_paths", []),
            "team_count": run.get("team_count", 0),
            "summary": run.get("summary", ""),
            "final_text": run.get("final_text", ""),
            "changes": [c.to_json() for c in self.changes],
            "tool_calls": run.get("tool_calls", []),
            "denied_calls": run.get("denied_calls", []),
            "usage": run.get("usage"),
            "prompt": self.prompt,
            "request": self.request,
        }


class DreamAgent:
    """Manual consolidation for one engine."""

    def __init__(
        self,
        engine: Engine,
        settings: DreamSettings | None = None,
        lock: ConsolidationLock | None = None,
    ) -> None:
        self.engine = engine
        self.settings = settings or DreamSettings.from_engine(engine)
        self.lock = lock or ConsolidationLock(engine.locations.consolidate_lock)

    def gates(self, *, current_session: str | None = None) -> DreamGates:
        return evaluate_gates(
            self.engine, self.settings, self.lock, current_session=current_session
        )

    def build(self, gates: DreamGates) -> tuple[str, dict[str, Any]]:
        """The prompt and the exact first request."""
        from workbench.engine.llm import LLMConfig, build_request

        locations = self.engine.locations
        prompt = consolidation_prompt(
            locations.memory_dir, locations.transcripts_dir, dream_extra(gates.sessions)
        )
        memory_prompt = prompt_for_engine(self.engine)
        request = build_request(
            model=LLMConfig.from_env(self.engine.env).model,
            max_tokens=MAX_OUTPUT_TOKENS,
            system=memory_prompt.text or None,
            messages=[{"role": "user", "content": prompt}],
            tools=tool_definitions(),
        )
        return prompt, request

    def dry_run(self, *, notice: str = "") -> DreamResult:
        """Build the request without sending it or touching the lock."""
        gates = self.gates()
        prompt, request = self.build(gates)
        return DreamResult(
            status="dry_run",
            engine="dry-run",
            mode="dry-run",
            gates=gates,
            reason="dry run: the request below was built but not sent",
            prompt=prompt,
            request=request,
            notice=notice,
        )

    async def run(self, *, mode: WriteMode) -> DreamResult:
        """Take the lock, run the agent, then queue, apply or only show its changes.

        `mode="show"` is the dry run with a key: the model runs, its diff is shown, nothing is
        written, and the lock is rolled back because nothing was consolidated.
        """
        gates = self.gates()
        prompt, request = self.build(gates)
        prior = self.lock.try_acquire()
        if prior is None:
            state = self.lock.state()
            raise ActionRequired(
                f"another dream is running (process {state.holder_pid} holds "
                f"{os.path.basename(state.path)}); try again when it finishes"
            )
        locations = self.engine.locations
        workspace = Workspace(
            project_root=locations.project_root,
            read_roots=(locations.memory_dir, locations.transcripts_dir),
        )
        try:
            run = await run_fork(
                self.engine,
                request,
                workspace=workspace,
                can_use_tool=create_auto_mem_can_use_tool(locations.memory_dir),
                max_turns=DREAM_MAX_TURNS,
                verb="Improved",
            )
        except BaseException:
            self.lock.rollback(prior)
            raise
        changes = settle_writes(
            self.engine, workspace.changed_files(), mode=mode, source="dream", note="dream"
        )
        rolled_back = False
        if mode == "show":
            self.lock.rollback(prior)
            rolled_back = True
        return DreamResult(
            status="ran",
            engine="llm",
            mode=mode,
            gates=gates,
            reason=_reason(run, changes, mode),
            prompt=prompt,
            run=run,
            changes=tuple(changes),
            lock_prior_ms=prior,
            lock_rolled_back=rolled_back,
        )


def _reason(run: ForkRun, changes: Sequence[FileChange], mode: str) -> str:
    if not changes:
        return f"the dream finished after {plural(run.loop.turns, 'turn')} and changed nothing"
    verbs: Mapping[str, str] = {
        "propose": "queued for review",
        "apply": "written",
        "show": "shown (nothing written)",
    }
    return f"{plural(len(changes), 'file change')} {verbs[mode]} after {plural(run.loop.turns, 'turn')}"
