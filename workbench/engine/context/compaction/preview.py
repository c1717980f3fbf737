"""The compaction dry run: every kind of compaction previewed on one transcript, and the
shape of the conversation that would follow (`buildPostCompactMessages`)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from workbench.engine.context.compaction.full import FullCompactionPlan, plan_full_compaction
from workbench.engine.context.compaction.microcompact import (
    MicrocompactPlan,
    TimeBasedConfig,
    plan_time_based_microcompact,
)
from workbench.engine.context.compaction.restore import (
    FileRestorationPlan,
    RestoredSkill,
    invoked_skills,
    plan_file_restoration,
    plan_skill_restoration,
    read_file_state,
)
from workbench.engine.context.compaction.session_compact import (
    SessionMemoryCompactionPlan,
    plan_session_memory_compaction,
)
from workbench.engine.context.compaction.survival import SurvivalReport, check_survival
from workbench.engine.context.thresholds import Thresholds, should_auto_compact
from workbench.engine.context.tokens import as_dict, rough_tokens_for_messages
from workbench.engine.wording import plural

if TYPE_CHECKING:
    from workbench.engine.profiles.detect import ResolvedVersion

POST_COMPACT_ORDER = ("boundary", "summary", "kept", "attachments", "hook_results")


def build_post_compact_messages(
    boundary: Any,
    summary_messages: Sequence[Any],
    messages_to_keep: Sequence[Any] = (),
    attachments: Sequence[Any] = (),
    hook_results: Sequence[Any] = (),
) -> list[Any]:
    """`buildPostCompactMessages`: boundary, summary, kept messages, attachments, hooks."""
    return [boundary, *summary_messages, *messages_to_keep, *attachments, *hook_results]


@dataclass(frozen=True)
class PostCompactPart:
    """One block of the conversation that follows a compaction, in order."""

    part: str
    items: int
    tokens: int
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {
            "part": self.part,
            "items": self.items,
            "tokens": self.tokens,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class CompactPreview:
    """What each compaction would do to one transcript right now."""

    transcript: str | None
    model: str
    messages: int
    pre_tokens: int
    threshold: int
    would_autocompact: bool
    autocompact_reason: str
    chosen: str
    """`session_memory` or `full`: the path Claude Code would take."""
    session_memory: SessionMemoryCompactionPlan
    full: FullCompactionPlan
    microcompact: MicrocompactPlan
    files: FileRestorationPlan
    skills: tuple[RestoredSkill, ...]
    survival: SurvivalReport
    layout: tuple[PostCompactPart, ...]
    threshold_compaction: bool = True
    """The release compacts this model by threshold (else `threshold` is only the formula's)."""
    notes: tuple[str, ...] = field(default_factory=tuple)
    """What the release in use does differently, and what could not be observed."""
    claude: ResolvedVersion | None = None

    def to_json(self) -> dict[str, Any]:
        sm = self.session_memory.to_json()
        full = self.full.to_json()
        micro = self.microcompact.to_json()
        return {
            **(self.claude.to_json() if self.claude else {}),
            "transcript": self.transcript,
            "model": self.model,
            "messages": self.messages,
            "pre_tokens": self.pre_tokens,
            "threshold": self.threshold if self.threshold_compaction else None,
            "threshold_compaction": self.threshold_compaction,
            "notes": list(self.notes),
            "would_autocompact": self.would_autocompact,
            "autocompact_reason": self.autocompact_reason,
            "chosen": self.chosen,
            "session_memory": sm,
            "full": full,
            "microcompact": micro,
            "restored_files": [
                {
                    "path": f.path,
                    "tokens": f.tokens,
                    "kind": f.kind,
                    "source": f.source,
                    "size_source": f.size_source,
                }
                for f in self.files.restored
            ],
            "file_restoration": self.files.to_json(),
            "restored_skills": [s.to_json() for s in self.skills],
            "survival": self.survival.to_json(),
            "layout": [p.to_json() for p in self.layout],
        }


def build_compact_preview(
    messages: Sequence[Any],
    *,
    thresholds: Thresholds,
    env: Mapping[str, str],
    notes: str | None = None,
    notes_path: str | None = None,
    template: str | None = None,
    last_summarized_uuid: str | None = None,
    transcript_path: str | None = None,
    now: datetime,
    microcompact_config: TimeBasedConfig | None = None,
    project_root: str | None = None,
    excluded_paths: Collection[str] = (),
    plan_dir: str | None = None,
    skill_dirs: Sequence[str] = (),
    summary: str | None = None,
    summary_source: str | None = None,
    ptl_gap: int | None = None,
    include_request: bool = False,
    read_disk: bool = True,
    sm_gates_on: bool = True,
    claude: ResolvedVersion | None = None,
) -> CompactPreview:
    """Preview every compaction over `messages` (the messages after the last boundary)."""
    full = plan_full_compaction(
        messages,
        model_max_output=thresholds.max_output_tokens,
        ptl_gap=ptl_gap,
        simulate_ptl=ptl_gap is not None,
        include_request=include_request,
        model=thresholds.model,
    )
    decision = should_auto_compact(full.pre_tokens, thresholds)
    sm = plan_session_memory_compaction(
        messages,
        notes,
        notes_path=notes_path,
        template=template,
        last_summarized_uuid=last_summarized_uuid,
        threshold=thresholds.autocompact,
        transcript_path=transcript_path,
        env=env,
        gates_on=sm_gates_on,
    )
    micro = plan_time_based_microcompact(messages, now=now, config=microcompact_config)
    files = plan_file_restoration(
        read_file_state(messages),
        excluded_paths=excluded_paths,
        plan_dir=plan_dir,
        project_root=project_root,
        read_disk=read_disk,
    )
    skills = tuple(plan_skill_restoration(invoked_skills(messages, skill_dirs=skill_dirs)))
    chosen = "session_memory" if sm.enabled and sm.available else "full"
    if chosen == "session_memory" and sm.keep_start_index is not None:
        span = list(messages[: sm.keep_start_index])
        survival_summary = summary if summary is not None else sm.summary_text
        source = summary_source if summary is not None else "session notes"
    else:
        span = list(messages)
        survival_summary = summary
        source = summary_source if summary is not None else None
    survival = check_survival(span, survival_summary, summary_source=source)
    partial = claude is not None and claude.profile.partial.keeps_recent_messages
    layout = _layout(chosen, messages, sm, files, skills, partial=partial)
    return CompactPreview(
        transcript=transcript_path,
        model=thresholds.model,
        messages=len(messages),
        pre_tokens=full.pre_tokens,
        threshold=thresholds.autocompact,
        would_autocompact=decision.fire,
        autocompact_reason=decision.reason,
        chosen=chosen,
        session_memory=sm,
        full=full,
        microcompact=micro,
        files=files,
        skills=skills,
        survival=survival,
        layout=layout,
        threshold_compaction=thresholds.threshold_compaction,
        notes=tuple([*thresholds.notes, *_release_notes(claude)]),
        claude=claude,
    )


def _release_notes(claude: ResolvedVersion | None) -> list[str]:
    """How the release in use compacts, where it differs from spec 04, in our words."""
    if claude is None:
        return []
    profile = claude.profile
    notes: list[str] = []
    if profile.partial.keeps_recent_messages:
        notes.append(
            f"Claude Code {profile.version} keeps the latest messages verbatim after a full "
            "compaction's summary, so the summary covers less than shown here; how many it "
            "keeps was not observed"
        )
    for feature in ("session memory", "time-based micro-compaction"):
        note = profile.unobserved(feature)
        if note:
            notes.append(note)
    return notes


def _layout(
    chosen: str,
    messages: Sequence[Any],
    sm: SessionMemoryCompactionPlan,
    files: FileRestorationPlan,
    skills: Sequence[RestoredSkill],
    *,
    partial: bool = False,
) -> tuple[PostCompactPart, ...]:
    boundary = PostCompactPart("boundary", 1, 0, "a compact boundary marks the new start")
    if chosen == "session_memory":
        kept_uuids = set(sm.kept_uuids)
        kept = [m for m in messages if as_dict(m).get("uuid") in kept_uuids]
        return (
            boundary,
            PostCompactPart("summary", 1, sm.summary_tokens, "the session notes as the summary"),
            PostCompactPart(
                "kept", len(kept), rough_tokens_for_messages(kept), "recent messages kept verbatim"
            ),
            PostCompactPart("attachments", 0, 0, "only a plan file, when there is one"),
            PostCompactPart("hook_results", 0, 0, "SessionStart hooks, if any are configured"),
        )
    restored_skills = [s for s in skills if s.included]
    attachment_tokens = files.total_tokens + sum(s.tokens for s in restored_skills)
    detail = plural(len(files.restored), "file")
    if restored_skills:
        detail += f" and {plural(len(restored_skills), 'skill')}"
    return (
        boundary,
        PostCompactPart("summary", 1, 0, "written by the model (size unknown until it runs)"),
        PostCompactPart(
            "kept",
            0,
            0,
            "the latest messages, kept verbatim (how many was not observed)"
            if partial
            else "full compaction keeps no messages",
        ),
        PostCompactPart(
            "attachments",
            len(files.restored) + (1 if restored_skills else 0),
            attachment_tokens,
            detail + " re-attached",
        ),
        PostCompactPart("hook_results", 0, 0, "SessionStart hooks, if any are configured"),
    )
