"""The memory instructions the agent receives (spec 01 §2.3, spec 02 §8.1), in our own words.

Claude Code's `loadMemoryPrompt` picks one of three prompts: the daily-log prompt (assistant
mode), the combined prompt (private + team folders) or the individual prompt (one folder). Each
is assembled from sections, and the extraction agent reuses the same sections, so every
section is a public function. The rules and facts match Claude Code's; the wording is ours.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from workbench.engine.jsutil import js_len, js_round

if TYPE_CHECKING:
    from workbench.engine.engine import Engine
    from workbench.engine.profiles import BehaviourProfile

PromptMode = Literal["individual", "combined", "daily-log"]
PROMPT_MODES: tuple[PromptMode, ...] = ("individual", "combined", "daily-log")
EXTRA_GUIDELINES_ENV = "CLAUDE_COWORK_MEMORY_EXTRA_GUIDELINES"
MAX_INDEX_LINES = 200
INDEX_LINE_CHARS = 150

# --- small shared pieces ----------------------------------------------------------------


def dir_exists_guidance(*, plural: bool = False) -> str:
    """Tell the model the folder(s) exist, so it writes straight away instead of mkdir-ing."""
    if plural:
        return (
            "Both folders are already there: write files into them directly with the Write "
            "tool, without running mkdir or checking that they exist."
        )
    return (
        "The folder is already there: write files into it directly with the Write tool, "
        "without running mkdir or checking that it exists."
    )


def remember_forget_guidance() -> str:
    """Explicit requests: save at once when asked to remember, remove when asked to forget."""
    return (
        "When the user explicitly asks you to remember something, save it right away as the "
        "type that fits best. When they ask you to forget something, find the matching entry "
        "and remove it."
    )


def frontmatter_example() -> str:
    """The fenced template of a memory file: name, description, type, then the body."""
    return "\n".join(
        [
            "```markdown",
            "---",
            "name: {{memory name}}",
            "description: {{one line on what this memory holds; later conversations use it "
            "to judge relevance, so make it specific}}",
            "type: {{user, feedback, project, reference}}",
            "---",
            "",
            "{{the memory itself; for feedback and project memories give the rule or fact "
            "first, then a **Why:** line and a **How to apply:** line}}",
            "```",
        ]
    )


# --- the four types ---------------------------------------------------------------------


@dataclass(frozen=True)
class _TypeText:
    name: str
    description: str
    when_to_save: str
    how_to_use: str
    examples: tuple[tuple[str, str], ...]
    body_structure: str | None = None
    scope: str | None = None


def _type_texts(combined: bool) -> tuple[_TypeText, ...]:
    feedback_description = (
        "How the user wants you to work: what to avoid and what to keep doing. Learn from "
        "failure AND from success: if you only write down corrections, you stay clear of old "
        "mistakes but drift away from approaches the user already approved and become "
        "needlessly cautious."
    )
    if combined:
        feedback_description += (
            " Before saving a private feedback memory, make sure it does not contradict a "
            "team feedback memory."
        )
    project_use = (
        "Use them to understand the context and motivation behind what the user asks, so "
        "your suggestions fit it"
    )
    project_use += (
        ", and to foresee where work may collide with other people's plans." if combined else "."
    )
    team = " (team)" if combined else ""
    private = " (private)" if combined else ""
    return (
        _TypeText(
            name="user",
            description=(
                "Who the user is: their role, goals, responsibilities, preferences and what "
                "they already know. These let you pitch help at the right level; a veteran "
                "engineer and a first-week student need different explanations. Never record "
                "judgements of the user that they would find unwelcome or that do not help "
                "the work."
            ),
            when_to_save=(
                "Whenever you learn something about the user's role, preferences, "
                "responsibilities or knowledge."
            ),
            how_to_use=(
                "Shape your work and your explanations to the user's background and point of view."
            ),
            examples=(
                (
                    "I've done backend work in Go for ten years, but this is my first time "
                    "touching the React side",
                    f"[saves user memory{private}: long-time Go backend engineer, new to React; "
                    "explain frontend ideas through backend analogies]",
                ),
            ),
            scope="always private" if combined else None,
        ),
        _TypeText(
            name="feedback",
            description=feedback_description,
            when_to_save=(
                'Whenever the user corrects how you work ("no, not like that", "don\'t", '
                '"stop doing X") or confirms that a non-obvious choice was right ("yes, '
                'exactly", "perfect, keep doing that"). Corrections are easy to spot; quiet '
                "approval is easy to miss, so watch for it. Record why, so you can judge edge "
                "cases later instead of following the rule blindly."
            ),
            how_to_use="Let it guide your behaviour so the user never has to say it twice.",
            body_structure=(
                "State the rule, then a **Why:** line with the reason the user gave (often a "
                "past incident or a firm preference), then a **How to apply:** line saying "
                "when and where it applies."
            ),
            examples=(
                (
                    "stop mocking the database in these tests; last time the mocks passed "
                    "and the real migration broke",
                    f"[saves feedback memory{team}: integration tests hit a real database, "
                    "never mocks. Why: mocked tests hid a broken migration. How to apply: "
                    "any test that touches persistence]",
                ),
                (
                    "yes, one bundled PR was the right call here, splitting it would have "
                    "been churn",
                    f"[saves feedback memory{private}: for refactors in this area the user "
                    "prefers one bundled PR over many small ones; a confirmed choice, not a "
                    "correction]",
                ),
            ),
            scope=(
                "private by default. Save it as team only when the guidance is plainly a "
                "convention for the whole project that every contributor should follow (a "
                "testing policy, a build rule), not one person's taste."
                if combined
                else None
            ),
        ),
        _TypeText(
            name="project",
            description=(
                "Facts about the work that the code and git history do not show: who is "
                "doing what, why, and by when; goals, incidents, decisions and deadlines. "
                "They go stale quickly, so keep them current."
            ),
            when_to_save=(
                "When you learn who is doing what, why, or by when. Always turn relative "
                'dates from the conversation into absolute dates when saving ("Thursday" '
                'becomes "2026-03-05"), so the memory still makes sense later.'
            ),
            how_to_use=project_use,
            body_structure=(
                "State the fact or decision, then a **Why:** line with the motivation (a "
                "constraint, a deadline, a stakeholder), then a **How to apply:** line on "
                "how it should shape your suggestions."
            ),
            examples=(
                (
                    "we're freezing merges after Thursday, mobile is cutting the release branch",
                    f"[saves project memory{team}: merge freeze from 2026-03-05 for the mobile "
                    "release cut; flag any non-critical PR work planned after that date]",
                ),
            ),
            scope=("private or team, with a strong lean towards team" if combined else None),
        ),
        _TypeText(
            name="reference",
            description=(
                "Where information lives outside the project: pointers to external systems "
                "and what each one is for."
            ),
            when_to_save=(
                "When you learn about a resource in an external system and what it is for "
                "(a Linear project, a Slack channel, a Grafana board)."
            ),
            how_to_use=(
                "When the user mentions an external system, or when the answer may be found in one."
            ),
            examples=(
                (
                    "payment bugs are tracked in the Linear project PAYMENTS",
                    f"[saves reference memory{team}: payment bugs live in Linear project PAYMENTS]",
                ),
            ),
            scope="usually team" if combined else None,
        ),
    )


def _render_type(text: _TypeText) -> str:
    lines = ["<type>", f"    <name>{text.name}</name>"]
    if text.scope:
        lines.append(f"    <scope>{text.scope}</scope>")
    lines += [
        f"    <description>{text.description}</description>",
        f"    <when_to_save>{text.when_to_save}</when_to_save>",
        f"    <how_to_use>{text.how_to_use}</how_to_use>",
    ]
    if text.body_structure:
        lines.append(f"    <body_structure>{text.body_structure}</body_structure>")
    lines.append("    <examples>")
    for said, saved in text.examples:
        lines += [f"    user: {said}", f"    assistant: {saved}", ""]
    lines[-1] = "    </examples>"
    lines.append("</type>")
    return "\n".join(lines)


def types_section(*, combined: bool = False) -> str:
    """`## Types of memory`: the four types, with a `<scope>` per type in combined mode."""
    intro = (
        "Each memory has exactly one of four types. For each type: what it holds, when to "
        "save one, and how to use it later."
    )
    if combined:
        intro += (
            " In this setup each type also carries a <scope>: whether it belongs in your "
            "private folder or the shared team folder."
        )
    blocks = "\n".join(_render_type(t) for t in _type_texts(combined))
    return f"## Types of memory\n\n{intro}\n\n<types>\n{blocks}\n</types>"


# --- what not to save, when to access, trusting recall -----------------------------------


def what_not_to_save_section(*, team: bool = False) -> str:
    """`## What NOT to save in memory`; `team` adds the no-secrets-in-team-memory rule."""
    bullets = [
        "Code patterns, conventions, architecture, file paths or project structure: reading "
        "the current project recovers all of it.",
        "Git history, recent changes and who changed what: `git log` and `git blame` are the "
        "authority.",
        "Debugging solutions and fix recipes: the fix is in the code and the commit message "
        "explains it.",
        "Anything already written in a CLAUDE.md file.",
        "Short-lived task details: work in progress, temporary state, the current "
        "conversation's context.",
    ]
    if team:
        bullets.append(
            "Sensitive data in shared team memories, ever: no API keys, tokens, passwords or "
            "user credentials."
        )
    body = "\n".join(f"- {b}" for b in bullets)
    closing = (
        "These exclusions hold even when the user explicitly asks you to save such things. "
        "If they ask you to save a list of PRs or a summary of recent activity, ask what in it "
        "was surprising or non-obvious: that part is what deserves a memory."
    )
    return f"## What NOT to save in memory\n\n{body}\n\n{closing}"


def drift_caveat() -> str:
    """Memories can be stale: check them against the present and fix the ones that are wrong."""
    return (
        "Memories can go stale. Before acting on one, check it against the current state of "
        "the files or resources it describes. When a memory disagrees with what you observe "
        "now, trust the observation, and update or remove the stale memory."
    )


def when_to_access_section() -> str:
    """`## When to access memories`: the four rules of Claude Code's section."""
    bullets = [
        "When a memory looks relevant to the task, or the user refers to work from an earlier "
        "conversation.",
        "You MUST read memory when the user asks you to check, recall or remember something.",
        "If the user tells you to ignore memory or not to use it, carry on as though MEMORY.md "
        "were empty, and do not quote or cite any memory.",
        drift_caveat(),
    ]
    return "## When to access memories\n\n" + "\n".join(f"- {b}" for b in bullets)


def trusting_recall_section() -> str:
    """`## Before recommending from memory`: a remembered file or flag is a past claim."""
    return "\n".join(
        [
            "## Before recommending from memory",
            "",
            "A memory that names a file, function, flag or setting records what was true when "
            "it was written. It may have been renamed, removed or never merged since.",
            "",
            "- If it names a file path, check that the file exists.",
            "- If it names a function or a flag, grep for it.",
            "- If the user is about to act on it, verify it first.",
            "",
            '"The memory says X exists" is not the same as "X exists now."',
            "",
            "For snapshots of repository state (activity summaries, architecture notes), "
            "prefer `git log` or reading the code over what a memory remembers.",
        ]
    )


# --- how to save ------------------------------------------------------------------------


def how_to_save_section(
    *,
    skip_index: bool = False,
    combined: bool = False,
    for_extraction: bool = False,
) -> str:
    """`## How to save memories`: the two-step process, or only step 1 with `skip_index`.

    `for_extraction` words the 200-line warning for the extraction agent (the index is in
    its system prompt rather than its conversation context).
    """
    where = (
        "in the folder that matches its scope (each folder has its own MEMORY.md)"
        if combined
        else "in its own file"
    )
    upkeep = [
        "Keep the name, description and type fields of each memory up to date with what it says.",
        "Organise memories by topic, not by date.",
        "Update or remove memories that turn out to be wrong or out of date.",
        "Do not write duplicates: look for an existing memory you can update before creating "
        "a new one.",
    ]
    if skip_index:
        step = (
            f"Write each memory {where} (for example `user_role.md`, `feedback_testing.md`), "
            "starting with this frontmatter:"
        )
        bullets = "\n".join(f"- {b}" for b in upkeep)
        return f"## How to save memories\n\n{step}\n\n{frontmatter_example()}\n\n{bullets}"
    loaded = (
        "MEMORY.md is loaded into your system prompt"
        if for_extraction
        else "MEMORY.md is always loaded into your conversation context"
    )
    index_bullet = (
        f"{loaded}, and lines after {MAX_INDEX_LINES} are cut off, so keep the index short."
    )
    return "\n".join(
        [
            "## How to save memories",
            "",
            "Saving a memory takes two steps:",
            "",
            f"**Step 1**: write the memory {where}, for example `user_role.md` or "
            "`feedback_testing.md`, starting with this frontmatter:",
            "",
            frontmatter_example(),
            "",
            "**Step 2**: add a pointer to it in `MEMORY.md`, one line of the form "
            f"`- [Title](file.md) — one-line hook`, under about {INDEX_LINE_CHARS} characters. "
            "MEMORY.md is an index: it has no frontmatter, and memory content never goes into "
            "it directly.",
            "",
            *(f"- {b}" for b in [index_bullet, *upkeep]),
        ]
    )


def persistence_section() -> str:
    """`## Memory and other forms of persistence`: memory is for later conversations."""
    return "\n".join(
        [
            "## Memory and other forms of persistence",
            "",
            "Memory is for what will help in future conversations. State that only matters "
            "inside this conversation belongs elsewhere:",
            "- to agree on an approach for the task at hand, use a plan rather than a memory;",
            "- to track the steps of the current work, use tasks rather than a memory.",
        ]
    )


def searching_past_context_section(
    memory_dir: str, transcripts_dir: str, *, shell_form: bool = False
) -> str:
    """`## Searching past context` (behind Claude Code's `tengu_coral_fern` flag)."""
    if shell_form:
        first = f'`grep -rn "<term>" {memory_dir} --include="*.md"`'
        last = f'`grep -rn "<term>" {transcripts_dir}/ --include="*.jsonl"`'
    else:
        first = f'the Grep tool with pattern "<term>", path `{memory_dir}` and glob `*.md`'
        last = f"the Grep tool with path `{transcripts_dir}/` and glob `*.jsonl`"
    return "\n".join(
        [
            "## Searching past context",
            "",
            f"To find something from earlier work, search the memory files first: {first}.",
            f"Only as a last resort, search the session transcripts: {last}. They are large; "
            "keep the search term narrow.",
        ]
    )


def extra_guidelines(env: Mapping[str, str]) -> str | None:
    """The user's own extra guidelines (`CLAUDE_COWORK_MEMORY_EXTRA_GUIDELINES`), if not blank."""
    value = env.get(EXTRA_GUIDELINES_ENV)
    return value if value and value.strip() else None


# --- whole prompts ----------------------------------------------------------------------


def _join(parts: list[str | None]) -> str:
    return "\n\n".join(p for p in parts if p)


def build_individual_prompt(
    memory_dir: str,
    *,
    skip_index: bool = False,
    extra: str | None = None,
    past_context: str | None = None,
) -> str:
    """`buildMemoryLines('auto memory', …)`: one private folder."""
    intro = (
        f"You have a persistent memory made of files, kept at `{memory_dir}`. "
        f"{dir_exists_guidance()}\n\n"
        "Build it up over time, so that future conversations know who the user is, how they "
        "like to work with you, which behaviours to avoid or repeat, and the context behind "
        f"the work they give you.\n\n{remember_forget_guidance()}"
    )
    return _join(
        [
            "# auto memory",
            intro,
            types_section(combined=False),
            what_not_to_save_section(team=False),
            how_to_save_section(skip_index=skip_index),
            when_to_access_section(),
            trusting_recall_section(),
            persistence_section(),
            extra,
            past_context,
        ]
    )


def build_flat_prompt(
    memory_dir: str,
    *,
    skip_index: bool = False,
    extra: str | None = None,
    past_context: str | None = None,
) -> str:
    """The single-folder prompt in Claude Code 2.1.332's shape: one `# Memory` text of about
    2,000 characters without sections, in the file format that release writes (the type
    nested under `metadata`, kebab-case names, `[[name]]` links). Our own words throughout."""
    index = (
        ""
        if skip_index
        else "\n\nAfter writing a memory, add one line pointing at it to `MEMORY.md`, the index "
        "you see at the start of every conversation: `- [Title](file.md) — one-line hook`, "
        f"under about {INDEX_LINE_CHARS} characters. The index holds pointers only, never "
        "memory content."
    )
    body = (
        f"You keep a memory of files at `{memory_dir}` that outlives this conversation. "
        f"{dir_exists_guidance()} Save what will help later conversations: who the user is "
        "and what they know (user), how they want you to work, both corrections and "
        "approaches they confirmed, with the reason (feedback), who is doing what and by "
        "when, with dates written out in full (project), and where things live in outside "
        "systems (reference). Do not save what the code, git history or CLAUDE.md already "
        "say, fix recipes, or the state of the task at hand, even when asked; ask what was "
        "surprising instead. "
        f"{remember_forget_guidance()}\n\n"
        "Give each memory its own file, starting with:\n\n"
        "```markdown\n---\nname: {{short-kebab-case-name}}\n"
        "description: {{one specific line; later conversations decide by it whether the "
        "memory matters}}\nmetadata:\n  type: {{user, feedback, project, reference}}\n---\n\n"
        "{{the memory; for feedback and project, the rule or fact, then **Why:** and **How "
        "to apply:**}}\n```\n\n"
        "Link related memories by name, as `[[other-memory-name]]`."
        f"{index}\n\n"
        "Keep memories current: update one rather than writing a duplicate, and remove what "
        "turned out wrong. Use memory when it is relevant or when the user asks you to recall "
        "something; if they say to ignore it, do. A memory is a note from the past: before "
        "acting on a file, function or flag it names, check that it still exists."
    )
    return _join(["# Memory", body, extra, past_context])


def memory_scope_section(memory_dir: str, team_dir: str) -> str:
    """`## Memory scope`: what private and team mean, and where each lives."""
    return "\n".join(
        [
            "## Memory scope",
            "",
            "Memories live at one of two scopes:",
            f"- private: between you and this user only, kept in `{memory_dir}`;",
            "- team: shared with everyone who works in this project and written to by all of "
            f"them, kept in `{team_dir}`. Team memories are synced at the start of every "
            "session.",
            "",
            "The type descriptions below say which scope each type belongs to.",
        ]
    )


def build_combined_prompt(
    memory_dir: str,
    team_dir: str,
    *,
    skip_index: bool = False,
    extra: str | None = None,
    past_context: str | None = None,
) -> str:
    """`buildCombinedMemoryPrompt`: a private folder plus the shared team folder."""
    intro = (
        "You have a persistent memory made of files in two folders: a private one at "
        f"`{memory_dir}` and a shared team one at `{team_dir}`. "
        f"{dir_exists_guidance(plural=True)}\n\n"
        "Build it up over time, so that future conversations know who the user is, how they "
        "and the team like to work, which behaviours to avoid or repeat, and the context "
        f"behind the work.\n\n{remember_forget_guidance()}"
    )
    return _join(
        [
            "# Memory",
            intro,
            memory_scope_section(memory_dir, team_dir),
            types_section(combined=True),
            what_not_to_save_section(team=True),
            how_to_save_section(skip_index=skip_index, combined=True),
            when_to_access_section(),
            trusting_recall_section(),
            persistence_section(),
            extra,
            past_context,
        ]
    )


def build_daily_log_prompt(
    memory_dir: str,
    *,
    skip_index: bool = False,
    extra: str | None = None,
    past_context: str | None = None,
) -> str:
    """`buildAssistantDailyLogPrompt`: append-only daily logs for long-lived sessions.

    The path is given as a pattern, never today's date, so the cached prompt stays valid
    across midnight.
    """
    pattern = f"{memory_dir}logs/YYYY/MM/YYYY-MM-DD.md"
    intro = "\n".join(
        [
            f"Your memory lives in `{memory_dir}`.",
            "",
            "This session runs for a long time. Whenever something is worth remembering, "
            f"append it to today's daily log file: `{pattern}`.",
            "",
            "Fill in today's date from `currentDate` in your context. When the date changes "
            "during the session, start appending to the new day's file.",
            "",
            "Write each entry as a short bullet with a timestamp. Create the file, and any "
            "missing parent folders, the first time you write to it. Only ever append: never "
            "rewrite or reorganise earlier entries. A separate nightly process distils these "
            "logs into MEMORY.md and the topic files.",
        ]
    )
    what_to_log = "\n".join(
        [
            "## What to log",
            "",
            "- Corrections and preferences the user expresses.",
            "- Facts about the user: their role and their goals.",
            "- Project context you could not work out from the code: deadlines, incidents, "
            "decisions and the reasons for them.",
            "- Pointers to external systems and what they are for.",
            "- Anything the user asks you to remember.",
        ]
    )
    index = None
    if not skip_index:
        index = (
            "## MEMORY.md\n\n"
            "`MEMORY.md` is the distilled index that the nightly process maintains; it is "
            "loaded for you automatically. Read it to get your bearings, but never edit it "
            "yourself."
        )
    return _join(
        [
            "# auto memory",
            intro,
            what_to_log,
            what_not_to_save_section(team=False),
            index,
            extra,
            past_context,
        ]
    )


# --- dispatch ---------------------------------------------------------------------------


@dataclass(frozen=True)
class MemoryPrompt:
    """The memory instructions for one configuration, with their size."""

    mode: PromptMode | Literal["disabled"]
    text: str
    tokens: int
    """`roughTokenCountEstimation` of the text: JS length / 4, rounded half up."""
    skip_index: bool
    reason: str
    """Why this mode was chosen (auto mode) or that it was asked for."""
    auto_memory_enabled: bool = True
    style: str = "sectioned"
    """`sectioned` (six `##` sections, 2.1.88) or `flat` (one text, 2.1.332)."""
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "style": self.style,
            "text": self.text,
            "tokens": self.tokens,
            "skip_index": self.skip_index,
            "reason": self.reason,
            "auto_memory_enabled": self.auto_memory_enabled,
            "notes": list(self.notes),
        }


def prompt_tokens(text: str) -> int:
    """Claude Code's rough estimate for a text: `Math.round(text.length / 4)`."""
    return js_round(js_len(text) / 4)


def choose_mode(
    *,
    auto_memory_enabled: bool,
    team_enabled: bool,
    daily_log_active: bool = False,
) -> tuple[PromptMode | None, str]:
    """`loadMemoryPrompt`'s dispatch: daily log, then combined, then individual, else none."""
    if daily_log_active and auto_memory_enabled:
        return "daily-log", "assistant (daily-log) mode is active"
    if team_enabled and auto_memory_enabled:
        return "combined", "team memory is in use, so private and team folders are combined"
    if auto_memory_enabled:
        return "individual", "auto memory is on and team memory is not in use"
    return None, "auto memory is disabled, so the agent gets no memory instructions"


def load_memory_prompt(
    memory_dir: str,
    team_dir: str,
    env: Mapping[str, str],
    *,
    mode: PromptMode | Literal["auto"] = "auto",
    skip_index: bool = False,
    auto_memory_enabled: bool = True,
    team_enabled: bool = False,
    daily_log_active: bool = False,
    past_context: str | None = None,
    style: str = "sectioned",
) -> MemoryPrompt:
    """The prompt `loadMemoryPrompt` would build; an explicit `mode` overrides the dispatch.

    `style` is the release's shape: `flat` (2.1.332) words the single-folder prompt as one
    text; the team and daily-log prompts keep the sectioned shape (the only one known).
    The extra guidelines reach the combined and individual prompts only: Claude Code reads
    them after the daily-log branch has already returned.
    """
    extra = extra_guidelines(env)
    if mode == "auto":
        chosen, reason = choose_mode(
            auto_memory_enabled=auto_memory_enabled,
            team_enabled=team_enabled,
            daily_log_active=daily_log_active,
        )
        if chosen is None:
            return MemoryPrompt("disabled", "", 0, skip_index, reason, auto_memory_enabled)
    else:
        if mode not in PROMPT_MODES:
            raise ValueError(f"unknown prompt mode {mode!r}")
        chosen, reason = mode, f"the {mode} prompt was asked for"
    if chosen == "daily-log":
        text = build_daily_log_prompt(memory_dir, skip_index=skip_index, past_context=past_context)
    elif chosen == "combined":
        text = build_combined_prompt(
            memory_dir, team_dir, skip_index=skip_index, extra=extra, past_context=past_context
        )
    elif style == "flat":
        text = build_flat_prompt(
            memory_dir, skip_index=skip_index, extra=extra, past_context=past_context
        )
    else:
        text = build_individual_prompt(
            memory_dir, skip_index=skip_index, extra=extra, past_context=past_context
        )
    used = "flat" if style == "flat" and chosen == "individual" else "sectioned"
    notes: tuple[str, ...] = ()
    if style == "flat" and chosen != "individual":
        notes = (
            f"the {chosen} prompt of the newer release was not observed: this is 2.1.88's "
            "sectioned shape",
        )
    return MemoryPrompt(
        chosen,
        text,
        prompt_tokens(text),
        skip_index,
        reason,
        auto_memory_enabled,
        style=used,
        notes=notes,
    )


def team_memory_in_use(team_dir: str) -> bool:
    """Whether to treat team memory as enabled: its folder exists.

    Claude Code decides with a server-side flag the workbench cannot see; a team folder on
    disk is the visible sign that team sync is in use for the project.
    """
    return os.path.isdir(team_dir)


def prompt_for_engine(
    engine: Engine,
    *,
    mode: PromptMode | Literal["auto"] = "auto",
    skip_index: bool = False,
    daily_log_active: bool = False,
    profile: BehaviourProfile | None = None,
) -> MemoryPrompt:
    """The memory prompt for the engine's project, environment and folders, in the shape of
    `profile`'s release (default: the engine's)."""
    locations = engine.locations
    return load_memory_prompt(
        locations.memory_dir,
        locations.team_dir,
        engine.env,
        mode=mode,
        skip_index=skip_index,
        auto_memory_enabled=locations.auto_memory_enabled,
        team_enabled=team_memory_in_use(locations.team_dir),
        daily_log_active=daily_log_active,
        style=(profile or engine.profile).prompt.style,
    )
