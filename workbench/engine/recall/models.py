"""Result types of recall, shared by the CLI (`to_json`, spec 05 keys) and the app."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from workbench.engine.recall.surfacing import SurfacingView

RecallEngine = Literal["llm", "offline"]
EngineChoice = Literal["auto", "llm", "offline"]
"""What a caller asks for: the model when a key is set (`auto`), or one engine by name."""
ENGINE_CHOICES: tuple[EngineChoice, ...] = ("auto", "llm", "offline")


@dataclass(frozen=True)
class SelectedMemory:
    """A memory recall would surface, and why."""

    path: str
    abs_path: str
    type: str | None
    description: str | None
    mtime: str
    age_days: int
    age: str
    """`today`, `yesterday` or `<d> days ago`."""
    freshness_note: str | None
    """The caution the agent gets with memories older than a day (None when fresher)."""
    score: float | None
    """The offline score; None when the model chose (it gives no scores)."""
    reasons: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "abs_path": self.abs_path,
            "type": self.type,
            "description": self.description,
            "mtime": self.mtime,
            "age_days": self.age_days,
            "age": self.age,
            "freshness_note": self.freshness_note,
            "score": self.score,
            "reasons": list(self.reasons),
        }


@dataclass(frozen=True)
class NearMiss:
    """A memory that came close, and what kept it out."""

    path: str
    score: float | None
    why_not: str
    candidate: bool = True
    """False for files that were not candidates (already surfaced)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "score": self.score,
            "why_not": self.why_not,
            "candidate": self.candidate,
        }


@dataclass(frozen=True)
class RecallResult:
    """One recall simulation: the candidates, the pick, the misses and what gets injected."""

    query: str
    engine: RecallEngine
    requested_engine: str
    candidates: tuple[str, ...]
    """Relative paths offered to the selector (scan minus already surfaced), newest first."""
    manifest: str
    selected: tuple[SelectedMemory, ...]
    near_misses: tuple[NearMiss, ...]
    request: dict[str, Any] | None
    """The exact API request body on the model path; None offline."""
    surfacing: SurfacingView
    recent_tools: tuple[str, ...] = ()
    surfaced: tuple[str, ...] = ()
    rejected_names: tuple[str, ...] = ()
    """Names the model returned that are not candidates (dropped)."""
    model_answer: str | None = None
    notes: tuple[str, ...] = ()
    error: dict[str, Any] | None = None
    """The model error that made `auto` fall back to offline, if any."""
    cutoff: float | None = None
    """The offline score a memory needed to be selected."""
    extras: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "engine": self.engine,
            "requested_engine": self.requested_engine,
            "candidates": list(self.candidates),
            "candidate_count": len(self.candidates),
            "manifest": self.manifest,
            "selected": [s.to_json() for s in self.selected],
            "near_misses": [n.to_json() for n in self.near_misses],
            "request": self.request,
            "recent_tools": list(self.recent_tools),
            "surfaced": list(self.surfaced),
            "rejected_names": list(self.rejected_names),
            "model_answer": self.model_answer,
            "cutoff": self.cutoff,
            "notes": list(self.notes),
            "error": self.error,
            "surfacing": self.surfacing.to_json(),
            **self.extras,
        }
