"""The summary request and the summary message, in the workbench's own words.

Claude Code's compaction prompt asks for an analysis block, then a summary with nine fixed
sections, and forbids tool calls. The text below carries the same rules and the same section
names (they are the structure summaries are checked against) but is worded by us; it is what
the dry run sizes and what a workbench-made summary request sends.
"""

from __future__ import annotations

import re

SUMMARY_SECTIONS = (
    "Primary Request and Intent",
    "Key Technical Concepts",
    "Files and Code Sections",
    "Errors and fixes",
    "Problem Solving",
    "All user messages",
    "Pending Tasks",
    "Current Work",
    "Optional Next Step",
)
# Partial compaction that keeps the later messages renames the last two sections.
UP_TO_SECTIONS = SUMMARY_SECTIONS[:7] + ("Work Completed", "Context for Continuing Work")

SUMMARIZER_SYSTEM_PROMPT = "You summarise software-engineering conversations faithfully."

_PREAMBLE = """Answer in plain text only; do not call any tool.
- Reading files, running commands or searching is not possible here: everything you need is \
already in the conversation above.
- A tool call would be refused and would use up the only reply you get.
- Your reply must consist of an <analysis> block and then a <summary> block.

"""

_SECTION_NOTES = {
    "Primary Request and Intent": "every explicit request of the user, in detail",
    "Key Technical Concepts": "technologies, frameworks and ideas that came up",
    "Files and Code Sections": (
        "each file looked at, changed or created, why it matters, with complete snippets of "
        "the important code"
    ),
    "Errors and fixes": "each error met, how it was fixed, and any correction the user gave",
    "Problem Solving": "problems solved and investigations still open",
    "All user messages": "every message the user wrote that is not a tool result",
    "Pending Tasks": "work the user asked for that is not done yet",
    "Current Work": (
        "exactly what was being done right before this request, with file names and snippets"
    ),
    "Optional Next Step": (
        "the next step, only if it follows directly from the latest explicit request; quote "
        "the conversation to show where the work stopped"
    ),
    "Work Completed": "what was finished in the part being summarised",
    "Context for Continuing Work": "what the later, kept messages need to make sense",
}

_BASE = """Write a thorough summary of the conversation so far. It will replace the \
conversation, so keep every technical detail, decision, file name and code pattern needed \
to carry on without losing context.

First, inside <analysis> tags, go through the conversation in order. For each part note what \
the user asked for, how it was approached, the decisions taken, file names, complete code \
snippets, function signatures and edits, the errors met and how they were fixed, and any \
feedback from the user. Then check the analysis for accuracy and completeness.

Then write the summary inside <summary> tags with these numbered sections:
{sections}

Instructions for summarising may also appear earlier in the conversation (for example under \
a "Compact Instructions" heading); follow them as well."""

_TRAILER = (
    "\n\nOnce more: no tool calls. Reply with plain text, an <analysis> block followed by a "
    "<summary> block; a tool call fails the task."
)


def compact_prompt(custom_instructions: str | None = None, *, up_to: bool = False) -> str:
    """The user message that asks for the summary (`getCompactPrompt` in our words)."""
    names = UP_TO_SECTIONS if up_to else SUMMARY_SECTIONS
    sections = "\n".join(f"{i}. {name}: {_SECTION_NOTES[name]}." for i, name in enumerate(names, 1))
    prompt = _PREAMBLE + _BASE.format(sections=sections)
    if custom_instructions and custom_instructions.strip():
        prompt += f"\n\nAdditional Instructions:\n{custom_instructions}"
    return prompt + _TRAILER


_ANALYSIS = re.compile(r"<analysis>[\s\S]*?</analysis>")
_SUMMARY = re.compile(r"<summary>([\s\S]*?)</summary>")
_BLANK_RUNS = re.compile(r"\n\n+")


def format_compact_summary(raw: str) -> str:
    """`formatCompactSummary`: drop the analysis, unwrap the summary, squeeze blank lines."""
    text = _ANALYSIS.sub("", raw, count=1)
    match = _SUMMARY.search(text)
    if match:
        text = text[: match.start()] + "Summary:\n" + match.group(1).strip() + text[match.end() :]
    return _BLANK_RUNS.sub("\n\n", text).strip()


def summary_message_text(
    summary: str,
    *,
    suppress_follow_up: bool,
    transcript_path: str | None = None,
    recent_preserved: bool = False,
) -> str:
    """The user message that replaces the conversation (same parts as Claude Code's, our
    wording): the formatted summary, where the full transcript is, whether recent messages
    were kept, and, for auto-compaction, an instruction to carry on without a recap."""
    text = (
        "This conversation continues from an earlier one that filled the context window. "
        "Below is a summary of that earlier part.\n\n" + format_compact_summary(summary)
    )
    if transcript_path:
        text += (
            "\n\nThe complete earlier conversation, with exact snippets, errors and outputs, "
            f"is in the transcript at: {transcript_path}"
        )
    if recent_preserved:
        text += "\n\nThe most recent messages follow unchanged."
    if suppress_follow_up:
        text += (
            "\nPick up the last task where it stopped, without asking the user anything and "
            "without restating the summary or announcing that you are continuing."
        )
    return text
