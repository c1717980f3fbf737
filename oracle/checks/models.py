"""The model a session uses and the output limit it asks for, against `gauge`.

Claude Code's first request names the model and its `max_tokens` (the output budget that
also sets the reserve under the window). Without `--model` that is the release's default; the
workbench is asked about the same session with its assistant records removed, as a session
that has just started looks, so it must fall back to its own default.
"""

from __future__ import annotations

import json
from typing import Any

from oracle import runner
from oracle.checks.base import AGREE, DIFFER, ERROR, Case, Check, Outcome, tail
from oracle.releases import Release


def _cases() -> list[Case]:
    models = (
        "claude-sonnet-4-6",
        "claude-opus-4-6",
        "claude-opus-4-7",
        "claude-opus-4-8",
        "claude-opus-5",
        "claude-opus-5-5",
        "claude-sonnet-5-5",
        "claude-haiku-5-5",
        "claude-sonnet-4-5",
        "claude-haiku-4-5",
        "claude-3-5-haiku",
    )
    cases = [Case("default", "no --model: the release's default model", {}, rule="default-model")]
    cases += [Case(m.removeprefix("claude-"), m, {"model": m}) for m in models]
    cases += [
        Case(
            f"alias-{alias}",
            f"--model {alias}: the model the alias names",
            {"model": alias, "alias": True},
            rule=f"alias-{alias}",
        )
        for alias in ("opus", "sonnet", "haiku")
    ]
    cases.append(
        Case(
            "max-output-env",
            "claude-sonnet-4-6 with CLAUDE_CODE_MAX_OUTPUT_TOKENS=8000",
            {"model": "claude-sonnet-4-6", "env": {"CLAUDE_CODE_MAX_OUTPUT_TOKENS": "8000"}},
        )
    )
    return cases


def run_case(release: Release, case: Case) -> Outcome:
    model = case.data.get("model")
    scenario = runner.Scenario(
        prompt="hello",
        args=["--model", model] if model else [],
        env=dict(case.data.get("env", {})),
    )
    out = Outcome("models", case.name, release.version, AGREE, rule=case.rule)
    out.inputs = {"model": model, "env": scenario.env}
    with runner.run(release, scenario) as run:
        out.seconds = run.seconds
        main = run.first_main
        transcripts = run.transcripts()
        if main is None or not transcripts:
            out.verdict, out.reason = ERROR, f"Claude Code sent nothing: {tail(run.stderr)}"
            return out
        body = main.body
        out.observed = {"model": body.get("model"), "max_tokens": body.get("max_tokens")}
        path = transcripts[0]
        alias = bool(case.data.get("alias"))
        if model is None or alias:
            # A session that has just started: no assistant record names the model yet.
            rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
            kept = [r for r in rows if r.get("type") != "assistant"]
            path = path.with_name("00000000-0000-4000-8000-000000000000.jsonl")
            path.write_text("".join(json.dumps(r) + "\n" for r in kept), encoding="utf-8")
        # An alias is resolved by the workbench itself, as `gauge --model opus` would be.
        extra = ["--model", model] if alias and model else []
        wb = runner.workbench(
            run.sandbox, ["gauge", str(path), *extra], env=run.env(), claude_version=release.version
        )
        got: dict[str, Any] = wb.json() if wb.returncode == 0 else {}
        if not got:
            out.verdict, out.reason = ERROR, f"workbench gauge failed: {tail(wb.stderr)}"
            return out
        out.workbench = {
            "model": got.get("model"),
            "model_source": got.get("model_source"),
            "max_output_tokens": got.get("max_output_tokens"),
            "context_window": got.get("context_window"),
        }
    problems = []
    if out.workbench["model"] != out.observed["model"]:
        problems.append(
            f"model: Claude Code {out.observed['model']}, workbench {out.workbench['model']}"
        )
    if out.workbench["max_output_tokens"] != out.observed["max_tokens"]:
        problems.append(
            f"output limit: Claude Code asks for {out.observed['max_tokens']:,}, the workbench "
            f"reserves for {out.workbench['max_output_tokens']:,}"
        )
    if problems:
        out.verdict, out.reason = DIFFER, "; ".join(problems)
    return out


CHECK = Check("models", "model and output limit", _cases, run_case)
