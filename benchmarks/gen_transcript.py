"""Generate a big, realistic Claude Code transcript for the benchmarks.

The session reads, greps, edits and runs tests in a loop, with thinking, split streaming
records, hook progress lines, file-history snapshots, structured `toolUseResult` copies,
an occasional screenshot, and an auto-compaction whenever the prompt nears the Sonnet 4.6
threshold, so its shape matches what a long real session looks like on disk.

    .venv/bin/python benchmarks/gen_transcript.py --mb 100 --out /tmp/big.jsonl

Output goes to a temporary folder by default and is never committed.
"""

from __future__ import annotations

import argparse
import base64
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from workbench.devtools.synth import SessionBuilder  # noqa: E402

_WORDS = (
    "request response handler config retry timeout cache index export import session "
    "token budget window summary record parser writer reader queue worker schedule "
    "payment invoice customer account ledger balance report filter page cursor limit"
).split()
_CODE = [
    "def {w}_{v}(self, {x}: int) -> bool:",
    "    return self.{w}.get({x}, None) is not None",
    "    if {x} > {n}:",
    "        raise ValueError(f'{w} too large: {{{x}}}')",
    "class {W}{V}:",
    '    """{W} {v} helper."""',
    "    {x} = {n}",
    "import {w}",
    "from {w}.{v} import {W}",
    "    for {x} in range({n}):",
    "        total += {x} * {n}",
    "    logger.info('{w} {v} done in %s ms', elapsed)",
    "",
]


def default_path(mb: int, seed: int) -> Path:
    """Where the benchmarks cache a generated transcript."""
    folder = Path(tempfile.gettempdir()) / "workbench-bench"
    folder.mkdir(exist_ok=True)
    return folder / f"transcript-{mb}mb-seed{seed}.jsonl"


class _Text:
    """Cheap varied text: lines drawn from a pool built once."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.pool = [self._line() for _ in range(4000)]

    def _line(self) -> str:
        r = self.rng
        template = r.choice(_CODE)
        w, v = r.choice(_WORDS), r.choice(_WORDS)
        return template.format(
            w=w, v=v, W=w.title(), V=v.title(), x=r.choice("abcijkn"), n=r.randint(2, 9999)
        )

    def code(self, lines: int, numbered: bool = False) -> str:
        chosen = self.rng.choices(self.pool, k=lines)
        if numbered:
            return "\n".join(f"{i:>6}→{line}" for i, line in enumerate(chosen, 1))
        return "\n".join(chosen)

    def prose(self, words: int) -> str:
        return " ".join(self.rng.choices(_WORDS, k=words)).capitalize() + "."


def compact_if_due(b: SessionBuilder, text: _Text) -> None:
    """Claude Code checks before every API call; compact once past the Sonnet 4.6 threshold."""
    if b.prompt_tokens + b.last_output + b.pending_tokens >= 167_000:
        b.compact("Summary:\n" + text.prose(600))


def generate(path: Path, *, mb: float, seed: int = 7, images: bool = True) -> Path:
    """Write a transcript of about `mb` megabytes to `path` (streamed, bounded memory)."""
    rng = random.Random(seed)
    text = _Text(rng)
    b = SessionBuilder(seed=seed, model="claude-sonnet-4-6", slug="steady-copper-river")
    target = int(mb * 1024 * 1024)
    screenshot = base64.b64encode(rng.randbytes(90_000)).decode()
    written = 0
    turn = 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as out:
        while written < target:
            turn += 1
            b.prompt(f"Task {turn}: {text.prose(rng.randint(8, 40))}")
            for _step in range(rng.randint(3, 9)):
                compact_if_due(b, text)
                file = f"/home/dev/projects/ledger/src/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}.py"
                kind = rng.random()
                thinking = text.prose(rng.randint(10, 80)) if rng.random() < 0.4 else None
                if kind < 0.4:
                    body = text.code(rng.randint(40, 400))
                    b.tool_call(
                        "Read",
                        {"file_path": file},
                        text.code(0)
                        + "\n".join(f"{i:>6}→{line}" for i, line in enumerate(body.split("\n"), 1)),
                        thinking=thinking,
                        text=text.prose(12) if rng.random() < 0.5 else None,
                        tool_use_result={
                            "type": "text",
                            "file": {
                                "filePath": file,
                                "content": body,
                                "numLines": body.count("\n") + 1,
                            },
                        },
                        hooks=rng.randint(0, 3),
                    )
                elif kind < 0.6:
                    old = text.code(rng.randint(2, 20))
                    new = text.code(rng.randint(2, 30))
                    b.tool_call(
                        "Edit",
                        {"file_path": file, "old_string": old, "new_string": new},
                        f"The file {file} has been updated. Here's the result:\n"
                        + text.code(rng.randint(5, 40), numbered=True),
                        thinking=thinking,
                        hooks=rng.randint(1, 4),
                        tool_use_result={"filePath": file, "oldString": old, "newString": new},
                    )
                elif kind < 0.8:
                    output = text.code(rng.randint(5, 120))
                    b.tool_call(
                        "Bash",
                        {
                            "command": f"pytest tests/{rng.choice(_WORDS)} -q",
                            "description": "tests",
                        },
                        output,
                        thinking=thinking,
                        tool_use_result={"stdout": output, "stderr": "", "interrupted": False},
                    )
                elif kind < 0.97 or not images:
                    b.tool_call(
                        "Grep",
                        {"pattern": rng.choice(_WORDS), "path": "src"},
                        "\n".join(
                            f"src/{rng.choice(_WORDS)}.py:{rng.randint(1, 900)}" for _ in range(30)
                        ),
                    )
                else:
                    b.tool_call(
                        "mcp__browser__screenshot",
                        {"url": "http://localhost:3000"},
                        [
                            {"type": "text", "text": "Screenshot taken"},
                            {
                                "type": "image",
                                "source": {
                                    "type": "base64",
                                    "media_type": "image/png",
                                    "data": screenshot,
                                },
                            },
                        ],
                    )
            compact_if_due(b, text)
            b.reply(text.prose(rng.randint(20, 120)), thinking=text.prose(30))
            b.system("turn_duration", durationMs=rng.randint(2_000, 90_000))
            for line in b.lines():
                data = (line + "\n").encode("utf-8")
                out.write(data)
                written += len(data)
            b.entries.clear()
    return path


def ensure(mb: int, seed: int = 7) -> Path:
    """The cached transcript for (mb, seed), generated on first use."""
    path = default_path(mb, seed)
    if not path.exists() or path.stat().st_size < mb * 1024 * 1024:
        partial = path.with_suffix(".partial")
        generate(partial, mb=mb, seed=seed)
        partial.replace(path)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=100)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or default_path(int(args.mb), args.seed)
    started = time.perf_counter()
    generate(out, mb=args.mb, seed=args.seed)
    size = out.stat().st_size
    print(f"wrote {out} ({size / 1e6:.1f} MB) in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
