"""The 36 rules: ids, labels, and detection of generated tokens in memory-file contexts."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from secretgen import CONTEXTS, GENERATORS, make_token

from workbench.engine.claude_paths import resolve_locations
from workbench.engine.team.secrets import (
    RULE_IDS,
    RULES,
    check_team_mem_secrets,
    label_for,
    scan_for_secrets,
    team_write_refusal_message,
)

EXPECTED_IDS = [
    "aws-access-token",
    "gcp-api-key",
    "azure-ad-client-secret",
    "digitalocean-pat",
    "digitalocean-access-token",
    "anthropic-api-key",
    "anthropic-admin-api-key",
    "openai-api-key",
    "huggingface-access-token",
    "github-pat",
    "github-fine-grained-pat",
    "github-app-token",
    "github-oauth",
    "github-refresh-token",
    "gitlab-pat",
    "gitlab-deploy-token",
    "slack-bot-token",
    "slack-user-token",
    "slack-app-token",
    "twilio-api-key",
    "sendgrid-api-token",
    "npm-access-token",
    "pypi-upload-token",
    "databricks-api-token",
    "hashicorp-tf-api-token",
    "pulumi-api-token",
    "postman-api-token",
    "grafana-api-key",
    "grafana-cloud-api-token",
    "grafana-service-account-token",
    "sentry-user-token",
    "sentry-org-token",
    "stripe-access-token",
    "shopify-access-token",
    "shopify-shared-secret",
    "private-key",
]


def test_the_36_rules_in_claude_codes_order():
    assert list(RULE_IDS) == EXPECTED_IDS
    assert set(GENERATORS) == set(EXPECTED_IDS)


@pytest.mark.parametrize(
    ("rule_id", "label"),
    [
        ("aws-access-token", "AWS Access Token"),
        ("gcp-api-key", "GCP API Key"),
        ("azure-ad-client-secret", "Azure AD Client Secret"),
        ("digitalocean-pat", "DigitalOcean PAT"),
        ("openai-api-key", "OpenAI API Key"),
        ("huggingface-access-token", "HuggingFace Access Token"),
        ("github-fine-grained-pat", "GitHub Fine Grained PAT"),
        ("github-oauth", "GitHub OAuth"),
        ("gitlab-pat", "GitLab PAT"),
        ("npm-access-token", "NPM Access Token"),
        ("pypi-upload-token", "PyPI Upload Token"),
        ("hashicorp-tf-api-token", "HashiCorp TF API Token"),
        ("sendgrid-api-token", "SendGrid API Token"),
        ("private-key", "Private Key"),
    ],
)
def test_labels_follow_the_label_rule(rule_id: str, label: str):
    assert label_for(rule_id) == label
    assert next(r for r in RULES if r.id == rule_id).label == label


def test_label_rule_for_unknown_words_capitalises_and_keeps_jwt():
    assert label_for("jwt-thing") == "JWT Thing"
    assert label_for("some-oauth-x") == "Some OAuth X"


def test_no_rule_source_holds_the_anthropic_prefix_literally():
    source = Path(__file__).resolve().parents[3] / "workbench/engine/team/secrets/rules.py"
    text = source.read_text(encoding="utf-8")
    assert "-".join(["sk", "ant", "api"]) not in text
    anthropic = next(r for r in RULES if r.id == "anthropic-api-key")
    assert "-".join(["sk", "ant", "api"]) + "03-" in anthropic.pattern


@pytest.mark.parametrize("rule_id", EXPECTED_IDS)
@pytest.mark.parametrize("context", sorted(CONTEXTS))
def test_generated_token_is_found_in_memory_file_context(rule_id: str, context: str):
    for seed in range(4):
        text = CONTEXTS[context](make_token(rule_id, seed))
        assert [m.rule_id for m in scan_for_secrets(text)] == [rule_id], (rule_id, context, seed)


def test_scan_returns_one_match_per_rule_in_rule_order():
    text = "\n".join(
        [
            make_token("private-key", 1),
            make_token("github-pat", 1),
            make_token("github-pat", 2),
            make_token("aws-access-token", 1),
            make_token("aws-access-token", 2),
        ]
    )
    ids = [m.rule_id for m in scan_for_secrets(text)]
    assert ids == ["aws-access-token", "github-pat", "private-key"]


def test_a_match_holds_only_rule_id_and_label():
    token = make_token("github-pat", 3)
    (match,) = scan_for_secrets(f"token {token}\n")
    fields = {f.name for f in dataclasses.fields(match)}
    assert fields == {"rule_id", "label"}
    assert token not in repr(match) and token not in str(match.to_json())


def test_clean_text_has_no_findings():
    text = "# Notes\n\nThe AKIA prefix marks AWS keys; ghp_ marks GitHub tokens.\n"
    assert scan_for_secrets(text) == []


def test_refusal_message_names_labels_and_the_sharing_fact():
    message = team_write_refusal_message(["GitHub PAT", "AWS Access Token"])
    assert "GitHub PAT, AWS Access Token" in message
    assert "shared" in message and "collaborator" in message
    assert "team memory" in message


def test_guard_refuses_team_paths_only(tmp_path: Path):
    locations = resolve_locations(tmp_path, memory_dir_override=str(tmp_path / "mem"))
    secret_text = f"deploy key {make_token('npm-access-token', 5)}\n"
    team_file = locations.team_dir + "deploy.md"
    private_file = locations.memory_dir + "deploy.md"
    refusal = check_team_mem_secrets(team_file, secret_text, locations)
    assert refusal is not None and "NPM Access Token" in refusal
    assert make_token("npm-access-token", 5) not in refusal
    assert check_team_mem_secrets(private_file, secret_text, locations) is None
    assert check_team_mem_secrets(team_file, "nothing secret here\n", locations) is None
    # The prefix attack: a sibling folder that merely starts with "team".
    evil = locations.memory_dir + "team-evil/deploy.md"
    assert check_team_mem_secrets(evil, secret_text, locations) is None
