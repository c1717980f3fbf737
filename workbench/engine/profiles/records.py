"""Transcript record kinds: which of them hold what the model reads, and which are bookkeeping.

A record is bookkeeping or conversation whoever reads it, so this classification is one table
for every release: each entry names the release it was first seen in. Counting bookkeeping as
context gives false peaks: a `prompt_snapshot` attachment holds the whole prompt again, and
counting it on a 2.1.332 transcript put a replay's peak at 194,560 where Claude Code's own
maximum was 167,000 (spec 08).
"""

from __future__ import annotations

# Top-level `type` values of records that are not conversation messages. The 2.1.88 ones
# are from its source (spec 04 §11.2); the rest were first seen in 2.1.332 transcripts.
LEGACY_RECORD_TYPES = frozenset(
    {
        "user",
        "assistant",
        "system",
        "attachment",
        "progress",
        "summary",
        "file-history-snapshot",
        "queue-operation",
        "custom-title",
        "ai-title",
        "last-prompt",
        "task-summary",
        "tag",
        "agent-name",
        "agent-color",
        "agent-setting",
        "pr-link",
        "mode",
        "permission-mode",
        "worktree-state",
        "content-replacement",
        "attribution-snapshot",
        "speculation-accept",
        "marble-origami-commit",
        "marble-origami-snapshot",
    }
)
NEW_RECORD_TYPES: dict[str, str] = {
    "api-request": "2.1.332",
    "api-request-blob": "2.1.332",
    "api-request-shape": "2.1.332",
    "atis-latch": "2.1.332",
    "cost-state": "2.1.332",
    "tools-used": "2.1.332",
}
"""Record type → first release seen in. None of them is a message: the count skips them."""

LEGACY_ATTACHMENT_TYPES = frozenset(
    {
        "relevant_memories",
        "date_change",
        "file",
        "compact_file_reference",
        "nested_memory",
        "plan_file_reference",
        "plan_mode",
        "invoked_skills",
        "task_status",
        "queued_command",
        "hook_success",
        "hook_blocking_error",
        "hook_non_blocking_error",
        "hook_cancelled",
        "hook_system_message",
        "hook_permission_decision",
        "hook_additional_context",
        "command_permissions",
        "structured_output",
        "deferred_tools_delta",
        "agent_listing_delta",
        "mcp_instructions_delta",
        "skill_listing",
        "skill_discovery",
    }
)
NEW_ATTACHMENT_TYPES: dict[str, str] = {
    "environment": "2.1.332",
    "model": "2.1.332",
    "total_tokens_reminder": "2.1.332",
    "session_context": "2.1.332",
    "date": "2.1.332",
    "remote_session_change": "2.1.332",
    "prompt_snapshot": "2.1.332",
    "instructions": "2.1.332",
}
"""Attachment subtype → first release seen in."""

BOOKKEEPING_ATTACHMENTS: dict[str, str] = {
    "prompt_snapshot": "a copy of the prompt kept for Claude Code's own records",
}
"""Attachment subtypes the model never reads, with what they are. The other new subtypes
are counted as context: `total_tokens_reminder` was observed to raise Claude Code's estimate
(41 tokens instead of 19 after one small tool result); the rest were not measured."""

UNMEASURED_ATTACHMENTS = frozenset(
    NEW_ATTACHMENT_TYPES.keys() - BOOKKEEPING_ATTACHMENTS.keys() - {"total_tokens_reminder"}
)
"""New subtypes counted as context although nobody measured whether the model reads them."""


def is_bookkeeping_attachment(kind: object) -> bool:
    """True for an attachment subtype that never reaches the model."""
    return kind in BOOKKEEPING_ATTACHMENTS


ALL_RECORD_TYPES = LEGACY_RECORD_TYPES | NEW_RECORD_TYPES.keys()
"""Every record type any profiled release writes (others are reported as unknown)."""
