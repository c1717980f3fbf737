"""Near misses: wrong length, wrong case and boundary violations, and what still matches.

A faithful port must miss what Claude Code misses (the blocking set is Claude Code's), and must
still catch what it catches, including substring matches of rules without boundaries.
"""

from __future__ import annotations

import pytest
from secretgen import make_token

from workbench.engine.team.secrets import scan_for_secrets

# Rules whose token is wrapped in gitleaks' unique-token boundary (\b before, terminator after).
STD_BOUNDARY = [
    "gcp-api-key",
    "digitalocean-pat",
    "digitalocean-access-token",
    "anthropic-api-key",
    "anthropic-admin-api-key",
    "openai-api-key",
    "huggingface-access-token",
    "sendgrid-api-token",
    "npm-access-token",
    "databricks-api-token",
    "pulumi-api-token",
    "postman-api-token",
    "grafana-api-key",
    "grafana-cloud-api-token",
    "grafana-service-account-token",
    "sentry-user-token",
    "stripe-access-token",
]
# Bodies of a range of lengths: a following body character extends the token instead.
VARIABLE_LENGTH = {"grafana-api-key", "grafana-cloud-api-token", "stripe-access-token"}
# Rules with no boundary at all: substring matches.
NO_BOUNDARY = [
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
    "pypi-upload-token",
    "hashicorp-tf-api-token",
    "shopify-access-token",
    "shopify-shared-secret",
]


def ids(text: str) -> list[str]:
    return [m.rule_id for m in scan_for_secrets(text)]


@pytest.mark.parametrize("rule_id", STD_BOUNDARY)
@pytest.mark.parametrize("follower", [".", ",", ")", ">", "x", "/"])
def test_std_boundary_token_touching_punctuation_is_missed(rule_id: str, follower: str):
    token = make_token(rule_id, 1)
    if rule_id in VARIABLE_LENGTH and (follower.isalnum() or follower == "/"):
        pytest.skip("a character of the token's own alphabet just makes it longer")
    assert rule_id not in ids(f"the key is {token}{follower} done")
    assert rule_id in ids(f"the key is {token} done")


@pytest.mark.parametrize("rule_id", STD_BOUNDARY)
def test_std_boundary_token_glued_to_a_word_is_missed(rule_id: str):
    token = make_token(rule_id, 2)
    assert rule_id not in ids(f"prefix_{token} x")
    assert rule_id in ids(f"prefix {token} x")


@pytest.mark.parametrize("rule_id", NO_BOUNDARY)
def test_rules_without_boundaries_match_inside_longer_text(rule_id: str):
    token = make_token(rule_id, 3)
    assert rule_id in ids(f"abc{token}xyz.")


# Each: a rule, a change that breaks the format, and why it no longer matches.
def _drop_last(token: str) -> str:
    return token[:-1]


def _grow_middle(token: str) -> str:
    middle = len(token) // 2
    return token[:middle] + "Z" + token[middle:]


WRONG_LENGTH = [
    ("aws-access-token", _drop_last),
    ("aws-access-token", lambda t: t + "Q"),
    ("gcp-api-key", _drop_last),
    ("gcp-api-key", _grow_middle),
    ("digitalocean-pat", _drop_last),
    ("anthropic-api-key", lambda t: t[:-3] + "AA"),
    ("anthropic-admin-api-key", lambda t: t[:-2] + "xAA"),
    ("huggingface-access-token", _drop_last),
    ("github-pat", _drop_last),
    ("github-fine-grained-pat", _drop_last),
    ("github-oauth", _drop_last),
    ("gitlab-pat", _drop_last),
    ("gitlab-deploy-token", _drop_last),
    ("twilio-api-key", _drop_last),
    ("sendgrid-api-token", _drop_last),
    ("npm-access-token", _drop_last),
    ("npm-access-token", lambda t: t + "a"),
    ("databricks-api-token", lambda t: t[:35]),
    ("pulumi-api-token", _drop_last),
    ("postman-api-token", _drop_last),
    ("grafana-service-account-token", _drop_last),
    ("sentry-user-token", _drop_last),
    ("sentry-user-token", lambda t: t + "a"),
    ("shopify-access-token", _drop_last),
    ("shopify-shared-secret", _drop_last),
    ("pypi-upload-token", lambda t: t[: len("pypi-AgEIcHlwaS5vcmc") + 49]),
    ("hashicorp-tf-api-token", lambda t: t[: t.index(".atlas") + 9 + 59]),
    ("stripe-access-token", lambda t: t[:17]),
    ("slack-user-token", lambda t: t[: t.rindex("-") + 28]),
    ("slack-bot-token", lambda t: "xoxb-123456789-" + t.split("-")[2]),
]


@pytest.mark.parametrize(("rule_id", "change"), WRONG_LENGTH)
def test_wrong_length_is_missed(rule_id: str, change):
    token = make_token(rule_id, 5)
    assert rule_id in ids(f"k {token} k")
    assert rule_id not in ids(f"k {change(token)} k")


WRONG_CASE = [
    ("aws-access-token", lambda t: t.lower()),
    ("gcp-api-key", lambda t: "AIZA" + t[4:]),
    ("github-pat", lambda t: t[:4].upper() + t[4:]),
    ("gitlab-pat", lambda t: "GLPAT" + t[5:]),
    ("npm-access-token", lambda t: "NPM" + t[3:]),
    ("digitalocean-pat", lambda t: t.upper()),
    ("twilio-api-key", lambda t: "sk" + t[2:]),
    ("sentry-user-token", lambda t: t.upper()),
    ("shopify-access-token", lambda t: "SHPAT" + t[5:]),
    ("stripe-access-token", lambda t: t[:3] + t[3:7].upper() + t[7:]),
]


@pytest.mark.parametrize(("rule_id", "change"), WRONG_CASE)
def test_wrong_case_is_missed(rule_id: str, change):
    token = make_token(rule_id, 6)
    assert rule_id not in ids(f"k {change(token)} k")


@pytest.mark.parametrize(
    ("rule_id", "change"),
    [
        ("slack-app-token", lambda t: t.upper()),
        ("private-key", lambda t: t.lower()),
        ("postman-api-token", lambda t: "PMAK-" + t[5:].upper()),
        ("sendgrid-api-token", lambda t: "SG." + t[3:].swapcase()),
    ],
)
def test_case_insensitive_parts_still_match(rule_id: str, change):
    assert rule_id in ids(f"k {change(make_token(rule_id, 6))} k")


def test_aws_needs_a_word_boundary_on_both_sides():
    token = make_token("aws-access-token", 8)
    assert "aws-access-token" not in ids(f"x{token}")
    assert "aws-access-token" not in ids(f"{token}9")
    assert "aws-access-token" in ids(f"({token}).")


def test_aws_body_excludes_0_1_8_9():
    token = make_token("aws-access-token", 9)
    assert "aws-access-token" not in ids(token[:-1] + "0")


def test_azure_needs_its_own_boundaries():
    token = make_token("azure-ad-client-secret", 4)
    assert "azure-ad-client-secret" in ids(f"secret={token}\n")
    assert "azure-ad-client-secret" in ids(f"({token})")
    assert "azure-ad-client-secret" in ids(token)
    assert "azure-ad-client-secret" not in ids(f"a{token} ")
    assert "azure-ad-client-secret" not in ids(f" {token};")
    assert "azure-ad-client-secret" not in ids(f"[{token}]")


def test_openai_project_key_must_end_in_a_word_character():
    # The first seed that gives a project-style key. (Re-seeding from `hash(token)` varied with
    # the process's hash seed and could cycle through non-project keys forever.)
    token = next(
        t for t in (make_token("openai-api-key", seed) for seed in range(1000)) if "-" in t[3:8]
    )
    assert "openai-api-key" in ids(f"k {token} k")
    assert "openai-api-key" not in ids(f"k {token[:-1]}- k")


def test_private_key_needs_64_characters_and_the_matching_end_line():
    dashes = "-" * 5
    header = f"{dashes}BEGIN OPENSSH PRIVATE KEY{dashes}"
    short = header + "\nanything\n" + f"{dashes}END OPENSSH PRIVATE KEY{dashes}"
    assert "private-key" not in ids(short)
    empty = header + "\n" + f"{dashes}END OPENSSH PRIVATE KEY{dashes}"
    assert "private-key" not in ids(empty)
    certificate = (
        f"{dashes}BEGIN CERTIFICATE{dashes}\n" + "A" * 80 + f"\n{dashes}END CERTIFICATE{dashes}"
    )
    assert "private-key" not in ids(certificate)
    assert "private-key" in ids(make_token("private-key", 12))


def test_sentry_org_token_needs_the_encoded_region_url():
    token = make_token("sentry-org-token", 1)
    assert "sentry-org-token" in ids(f"k {token} k")
    body = token[len("sntrys_") : token.rindex("_")]
    for fragment in ("LCJyZWdpb25fdXJs", "InJlZ2lvbl91cmwi", "cmVnaW9uX3VybCI6"):
        body = body.replace(fragment, "AAAAAAAAAAAAAAAA")
    broken = "sntrys_" + body + token[token.rindex("_") :]
    assert "sentry-org-token" not in ids(f"k {broken} k")


def test_non_ascii_letters_are_not_word_characters_as_in_javascript():
    token = make_token("npm-access-token", 3)
    assert "npm-access-token" in ids(f"é{token} k")  # é is no word character for JS `\b`
    assert "npm-access-token" not in ids(f"_{token} k")
    aws = make_token("aws-access-token", 3)
    assert "aws-access-token" in ids(f"ü{aws}ü")


def test_digits_are_ascii_digits_only():
    token = make_token("slack-app-token", 3)
    arabic_three = "\u0663"
    assert "slack-app-token" not in ids(token.replace("xapp-1-", f"xapp-{arabic_three}-"))
    assert "slack-app-token" in ids(token)
