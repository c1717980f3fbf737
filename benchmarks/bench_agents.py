"""The memory agents' local costs: judging Bash commands, and planning an extraction.

Figures: the read-only judge per command (tree-sitter parse plus the allowlist checks), with
the bare parse measured in the same run as the baseline; and an extraction dry run (load the
transcript, scan the memory folder, rebuild the conversation, build the exact request) on a
generated 20 MB transcript. No model is called.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import median_seconds, report  # noqa: E402
from workbench.engine import Engine  # noqa: E402
from workbench.engine.agents.bash_readonly import _parser, judge_command  # noqa: E402
from workbench.engine.agents.extraction import ExtractionAgent  # noqa: E402
from workbench.engine.agents.extraction_state import ExtractionSettings  # noqa: E402

COMMANDS = [
    "ls -la",
    "cat MEMORY.md | head -50",
    "grep -rn 'TODO' src --include='*.py'",
    "find . -name '*.md' -type f | xargs wc -l",
    "git log --oneline -20 && git status",
    "sed -n '1,40p' README.md",
    "sort -k2 -t, data.csv | uniq -c | sort -rn | head",
    "jq '.dependencies' package.json",
    "rm -rf build",
    "echo $HOME > out.txt",
    "git push origin main",
    "find . -delete",
    "cat <<'EOF'\nliteral text\nEOF",
    "(cd src && ls) 2>/dev/null || true",
    "python -c 'import os; os.remove(\"x\")'",
    "sed -i 's/a/b/' file.md",
] * 8


def bench_judge() -> None:
    parser = _parser()
    encoded = [c.encode() for c in COMMANDS]
    judge_s, _ = median_seconds(lambda: [judge_command(c) for c in COMMANDS], runs=9)
    parse_s, _ = median_seconds(lambda: [parser.parse(c) for c in encoded], runs=9)
    per_judge = judge_s / len(COMMANDS) * 1e6
    per_parse = parse_s / len(COMMANDS) * 1e6
    report("bash judge per command", per_judge, "µs", extra=f"({len(COMMANDS)} commands)")
    report(
        "bash parse alone per command",
        per_parse,
        "µs",
        extra=f"(judge/parse ratio {per_judge / per_parse:.2f})",
    )


def bench_extraction_plan() -> None:
    from benchmarks.gen_transcript import generate

    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        env = {"CLAUDE_CONFIG_DIR": str(Path(tmp) / "claude"), "HOME": tmp}
        engine = Engine.open(project, env=env)
        memory = Path(engine.locations.memory_dir)
        memory.mkdir(parents=True)
        for n in range(200):
            (memory / f"project_note_{n}.md").write_text(
                f"---\nname: note {n}\ndescription: fact number {n}\ntype: project\n---\n\nx\n"
            )
        transcript = Path(engine.locations.transcripts_dir) / "bench-session.jsonl"
        transcript.parent.mkdir(parents=True, exist_ok=True)
        generate(transcript, mb=20, images=True)
        agent = ExtractionAgent(engine, ExtractionSettings())
        seconds, _ = median_seconds(lambda: agent.plan(str(transcript)), runs=3)
        request = agent.plan(str(transcript)).request or {}
        size = len(str(request).encode()) / 1e6
        report(
            "extraction dry run on a 20 MB transcript",
            seconds,
            "s",
            extra=f"({len(request.get('messages', []))} messages, ~{size:.1f} MB request)",
        )


if __name__ == "__main__":
    bench_judge()
    bench_extraction_plan()
