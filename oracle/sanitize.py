"""Make a transcript Claude Code wrote safe and small enough to keep in tests/data.

Kept as they were: the structure, record kinds, ids, timestamps, models, usage figures and
compaction metadata, and the few texts the oracle itself sent. Every other text is Claude
Code's (reminders, error messages, the continuation note, prompt snapshots): each is replaced
by filler of the same length with its whitespace kept, so token estimates and line structure
survive while none of Claude Code's words do. Bookkeeping records (request shapes and blobs,
prompt snapshots) are cut to a bounded size: no release counts them as context, so their
size only has to stay large enough to show a false peak in a reader that does. Texts over
`TEXT_CAP` are cut too (see there).
"""

from __future__ import annotations

import json
import re
from typing import Any


def sanitize_ascii(text: str) -> str:
    """Claude Code's sanitizePath for a short ASCII path (every non-alphanumeric is `-`)."""
    return re.sub(r"[^A-Za-z0-9]", "-", text)


def scrub(value: Any, root: str) -> Any:
    """Replace the sandbox root (and its sanitised form) with placeholders, recursively."""
    plain, flat = root, sanitize_ascii(root)
    if isinstance(value, str):
        return value.replace(plain, "<sandbox>").replace(flat, "<sandbox-sanitized>")
    if isinstance(value, (list, tuple)):
        return [scrub(v, root) for v in value]
    if isinstance(value, dict):
        return {k: scrub(v, root) for k, v in value.items()}
    return value


KEEP_KEYS = frozenset(
    {
        "type",
        "subtype",
        "uuid",
        "parentUuid",
        "logicalParentUuid",
        "leafUuid",
        "sessionId",
        "timestamp",
        "model",
        "requestedModel",
        "id",
        "tool_use_id",
        "toolUseID",
        "sourceToolAssistantUUID",
        "name",
        "role",
        "stop_reason",
        "trigger",
        "version",
        "cwd",
        "userType",
        "entrypoint",
        "gitBranch",
        "requestId",
        "requestRef",
        "promptId",
        "messageId",
        "headUuid",
        "anchorUuid",
        "tailUuid",
        "uuids",
        "allUuids",
        "summarizedTurnPromptUuids",
        "slug",
    }
)
BOOKKEEPING_TYPES = frozenset({"api-request", "api-request-blob", "api-request-shape"})
BOOKKEEPING_ATTACHMENTS = frozenset({"prompt_snapshot"})
BOOKKEEPING_CAP = 1_000
TEXT_CAP = 1_000
"""Longer texts (skill listings, agent listings) are cut: they precede the session's first
usage, so no firing point depends on their size, and they would make recordings large."""
SHORT = 24
"""Strings shorter than this are identifiers or labels, not prose; they are kept."""
OUR_TEXTS = ("go", "hello", "Search finished.", "Probing.")
OUR_PREFIXES = ("<summary>Probe session",)
_FILL = "oraclefillertext"


def filler(text: str, cap: int | None = None) -> str:
    """`text` with every non-space character replaced, same length (or `cap`)."""
    if cap is not None and len(text) > cap:
        text = text[:cap]
    counter = iter(range(len(text)))
    return re.sub(r"\S", lambda _m: _FILL[next(counter) % len(_FILL)], text)


def _is_ours(text: str) -> bool:
    return text in OUR_TEXTS or text.startswith(OUR_PREFIXES)


def _clean(value: Any, key: str | None, cap: int | None) -> Any:
    if isinstance(value, str):
        if key in KEEP_KEYS or len(value) < SHORT or _is_ours(value):
            return value
        return filler(value, cap)
    if isinstance(value, list):
        return [_clean(v, key, cap) for v in value]
    if isinstance(value, dict):
        return {k: _clean(v, k, cap) for k, v in value.items()}
    return value


def _shrink(record: dict[str, Any]) -> dict[str, Any]:
    """A bookkeeping record with every nested value folded into one bounded filler string."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key in KEEP_KEYS or not isinstance(value, (str, list, dict)):
            out[key] = value
        elif isinstance(value, str) and len(value) < SHORT:
            out[key] = value
        else:
            out[key] = filler(json.dumps(value, ensure_ascii=False), BOOKKEEPING_CAP)
    return out


def sanitize_transcript(rows: list[dict[str, Any]], sandbox_root: str) -> list[dict[str, Any]]:
    out = []
    for row in scrub(rows, sandbox_root):
        kind = row.get("type")
        attachment = row.get("attachment") if isinstance(row.get("attachment"), dict) else {}
        if kind in BOOKKEEPING_TYPES:
            row = _shrink(row)
        elif attachment.get("type") in BOOKKEEPING_ATTACHMENTS:
            row = dict(row, attachment=_shrink(attachment))
        out.append(_clean(row, None, TEXT_CAP))
    return out
