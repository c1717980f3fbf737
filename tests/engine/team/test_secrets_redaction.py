"""Redaction, placeholder labels, baselines and the allow marker."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from secretgen import CONTEXTS, GENERATORS, make_token
from secretgen.corpus import corpus

from workbench.engine.claude_paths import resolve_locations
from workbench.engine.errors import NotFoundError, UserInputError
from workbench.engine.team.secrets import check_team_mem_secrets, scan_for_secrets
from workbench.engine.team.secrets.prefilter import hyperscan_available
from workbench.engine.team.secrets.redaction import REDACTED, redact, redact_secrets
from workbench.engine.team.secrets.rules import RULES
from workbench.engine.team.secrets.scanner import find_secrets, js_view
from workbench.engine.team.secrets.suppression import ALLOW_MARKER, Baseline, suppress

BACKENDS = ["re"] + (["hyperscan"] if hyperscan_available() else [])


def reference_redaction(text: str) -> str:
    """Claude Code's redactSecrets: every rule, in order, over the text so far (no prefilter)."""

    def replace(match: re.Match[str]) -> str:
        if match.re.groups and match.group(1) is not None:
            return match.group(0).replace(match.group(1), REDACTED, 1)
        return REDACTED

    for rule in RULES:
        if rule.multiline:
            view = js_view(text)
            text = view.restore(rule.regex.sub(replace, view.text))
        else:
            text = rule.regex.sub(replace, text)
    return text


@pytest.mark.parametrize("rule_id", sorted(GENERATORS))
@pytest.mark.parametrize("context", sorted(CONTEXTS))
def test_redaction_never_leaves_the_secret(rule_id: str, context: str):
    token = make_token(rule_id, 21)
    text = CONTEXTS[context](token)
    redacted = redact_secrets(text)
    assert token not in redacted
    assert REDACTED in redacted
    assert scan_for_secrets(redacted) == []


def test_redaction_replaces_group_one_and_keeps_the_boundary():
    token = make_token("npm-access-token", 1)
    assert redact_secrets(f'token="{token}";\n') == f'token="{REDACTED}";\n'
    azure = make_token("azure-ad-client-secret", 1)
    assert redact_secrets(f"secret=({azure})") == f"secret=({REDACTED})"
    key = make_token("private-key", 1)
    assert redact_secrets(f"x\n{key}\ny") == f"x\n{REDACTED}\ny"


def test_redaction_counts_each_secret():
    text = "\n".join(make_token("github-pat", n) for n in range(3)) + "\n"
    result = redact(text)
    assert result.count == 3
    assert result.text == "\n".join([REDACTED] * 3) + "\n"


@pytest.mark.parametrize("backend", BACKENDS)
def test_redaction_matches_claude_codes_sequential_replace_on_a_corpus(backend: str):
    for text in corpus(150, seed=5, secret_rate=0.3):
        assert redact_secrets(text, backend=backend) == reference_redaction(text)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from([make_token(r, 1) for r in GENERATORS]),
            st.sampled_from([" ", "\n", ".", "x", "`", "🚀", "\\n", "Q~", "-----"]),
        ),
        max_size=12,
    ).map("".join)
)
def test_property_redaction_matches_reference(text: str):
    # The prefilter only skips rules; it must never change what Claude Code's replace does.
    redacted = redact_secrets(text)
    assert redacted == reference_redaction(text)
    if not find_secrets(text):
        assert redacted == text


# --- placeholders: labelled, never let through -------------------------------------------


@pytest.mark.parametrize(
    ("text", "rule_id"),
    [
        ("AKIA" + "IOSFODNN7" + "EXAMPLE", "aws-access-token"),
        ("ghp_" + "x" * 36, "github-pat"),
        ("xoxb-" + "1234567890-" + "1234567890-" + "x" * 24, "slack-bot-token"),
        ("sntryu_" + "a" * 64, "sentry-user-token"),
        ("glpat-" + "X" * 20, "gitlab-pat"),
    ],
)
def test_placeholders_are_labelled_but_still_blocked(text: str, rule_id: str):
    (finding,) = find_secrets(f"key {text} end")
    assert finding.rule_id == rule_id
    assert finding.likely_placeholder and finding.placeholder_reason
    assert rule_id in [m.rule_id for m in scan_for_secrets(f"key {text} end")]
    assert text not in finding.placeholder_reason


@pytest.mark.parametrize("rule_id", sorted(GENERATORS))
def test_realistic_tokens_are_not_called_placeholders(rule_id: str):
    flagged = [
        f.placeholder_reason
        for seed in range(5)
        for f in find_secrets(f"k {make_token(rule_id, seed)} k")
        if f.likely_placeholder
    ]
    assert flagged == []


# --- suppression --------------------------------------------------------------------------


def test_allow_marker_suppresses_only_its_line():
    a, b = make_token("github-pat", 1), make_token("github-pat", 2)
    text = f"one {a} <!-- {ALLOW_MARKER} -->\ntwo {b}\n"
    findings = find_secrets(text, path="t.md")
    outcome = suppress(text, findings)
    assert outcome.inline == 1 and outcome.baseline == 0
    assert [f.line for f in outcome.kept] == [2]


def test_allow_marker_on_any_line_of_a_private_key_block():
    key = make_token("private-key", 2)
    on_footer = f"```\n{key}  {ALLOW_MARKER}\n```\n"
    outcome = suppress(on_footer, find_secrets(on_footer))
    assert outcome.inline == 1 and outcome.kept == ()
    on_fence = f"``` {ALLOW_MARKER}\n{key}\n```\n"
    outcome = suppress(on_fence, find_secrets(on_fence))
    assert outcome.inline == 0 and len(outcome.kept) == 1


def test_suppression_never_affects_the_guard(tmp_path: Path):
    locations = resolve_locations(tmp_path, memory_dir_override=str(tmp_path / "mem"))
    text = f"key {make_token('github-pat', 3)} {ALLOW_MARKER}\n"
    assert check_team_mem_secrets(locations.team_dir + "x.md", text, locations) is not None
    assert scan_for_secrets(text) != []


def test_baseline_round_trip_and_formats(tmp_path: Path):
    text = f"a {make_token('npm-access-token', 1)}\nb {make_token('pulumi-api-token', 1)}\n"
    findings = find_secrets(text, path="team/notes.md")
    assert len(findings) == 2
    written = tmp_path / "baseline.json"
    Baseline.from_findings(findings).write(written)
    stored = written.read_text()
    assert make_token("npm-access-token", 1) not in stored
    loaded = Baseline.load(written)
    outcome = suppress(text, findings, loaded)
    assert outcome.baseline == 2 and outcome.kept == ()

    plain = tmp_path / "baseline.txt"
    plain.write_text(f"# reviewed\n{findings[0].fingerprint}  npm token in notes\n\n")
    outcome = suppress(text, findings, Baseline.load(plain))
    assert outcome.baseline == 1 and [f.rule_id for f in outcome.kept] == ["pulumi-api-token"]

    report = tmp_path / "report.json"
    report.write_text(json.dumps({"findings": [f.to_json() for f in findings[1:]]}))
    assert Baseline.load(report).fingerprints == {findings[1].fingerprint}


def test_bad_baselines_are_usage_errors(tmp_path: Path):
    with pytest.raises(NotFoundError):
        Baseline.load(tmp_path / "missing.txt")
    bad = tmp_path / "bad.txt"
    bad.write_text("not-a-fingerprint\n")
    with pytest.raises(UserInputError, match="bad.txt:1"):
        Baseline.load(bad)
    broken = tmp_path / "broken.json"
    broken.write_text('{"fingerprints": [')
    with pytest.raises(UserInputError):
        Baseline.load(broken)


def test_shannon_entropy_matches_the_textbook_formula():
    import math
    from collections import Counter

    from workbench.engine.team.secrets.placeholder import shannon_entropy

    for text in ["", "aaaa", "ab", "AKIA" + "IOSFODNN7" + "EXAMPLE", "x" * 3000 + "yz"]:
        n = len(text)
        expected = -sum(c / n * math.log2(c / n) for c in Counter(text).values()) if n else 0.0
        assert shannon_entropy(text) == pytest.approx(expected)
