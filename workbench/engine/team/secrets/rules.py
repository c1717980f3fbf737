"""The 36 secret rules Claude Code blocks in team memory (spec 03 §7), ported to Python `re`.

Claude Code runs these as JavaScript regular expressions, so the port keeps JavaScript's
semantics rather than Go's:
- `\\b`, `\\w` and `\\d` are ASCII-only (`re.ASCII`), and the `i` flag folds ASCII only.
- JavaScript's `\\s` is Unicode-aware even without the `u` flag (NBSP, U+2028, BOM, …), so the
  terminators use that exact class instead of Python's `\\s`.
- `$` without the `m` flag is the very end of the text: `\\Z`, never Python's `$` (which also
  matches before a final newline).
- Go's inline `(?i)` had already been rewritten by Claude Code as explicit `[a-zA-Z]` classes;
  only `slack-app-token` and `private-key` carry the `i` flag, for the whole pattern.

Each rule also carries what the fast engine needs: a `core` (the token alone, no boundaries,
with trailing open quantifiers cut to their minimum) that every real match contains, the
literal `keywords` every core match contains, and the gitleaks entropy threshold used only to
label likely placeholders.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

# JavaScript's `\s`: ECMAScript WhiteSpace plus LineTerminator.
JS_WHITESPACE = "\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"

# gitleaks' "unique token" terminator: a quote, backtick, whitespace, `;`, a literal `\n` or `\r`
# escape (backslash + letter), or the end of the text.
TERMINATOR = "(?:[`'\"" + JS_WHITESPACE + r";]|\\[nr]|\Z)"

# Built from pieces so that this file never holds the literal key prefix.
_SK_ANT = "-".join(["sk", "ant"])
ANTHROPIC_API_PREFIX = "-".join([_SK_ANT, "api"])
ANTHROPIC_ADMIN_PREFIX = "-".join([_SK_ANT, "admin01"])

_AZURE_BEFORE = r"(?:\A|[\\'\"`" + JS_WHITESPACE + r">=:(,)])"
_AZURE_AFTER = r"(?:\Z|[\\'\"`" + JS_WHITESPACE + r"<),])"

_SPECIAL_LABEL_WORDS = {
    "aws": "AWS",
    "gcp": "GCP",
    "api": "API",
    "pat": "PAT",
    "ad": "AD",
    "tf": "TF",
    "oauth": "OAuth",
    "npm": "NPM",
    "pypi": "PyPI",
    "jwt": "JWT",
    "github": "GitHub",
    "gitlab": "GitLab",
    "openai": "OpenAI",
    "digitalocean": "DigitalOcean",
    "huggingface": "HuggingFace",
    "hashicorp": "HashiCorp",
    "sendgrid": "SendGrid",
}


def label_for(rule_id: str) -> str:
    """The human label of a rule id: special words mapped, others capitalised, joined by spaces."""
    return " ".join(
        _SPECIAL_LABEL_WORDS.get(part, part[:1].upper() + part[1:]) for part in rule_id.split("-")
    )


@dataclass(frozen=True)
class SecretRule:
    """One rule: its id, the exact pattern, and the hints the fast engine uses."""

    id: str
    pattern: str
    """The exact rule, in Python syntax with JavaScript semantics."""
    core: str
    """The token without boundaries; every match of `pattern` contains a match of it."""
    keywords: tuple[str, ...]
    """Literals that every match of `core` contains (lower-case when `ignore_case`)."""
    ignore_case: bool = False
    entropy: float | None = None
    """gitleaks' threshold: a secret at or below it is labelled a likely placeholder."""
    prefix_len: int = 0
    """Length of the fixed start of the secret, skipped when judging whether the rest is a
    placeholder."""
    multiline: bool = False
    """True only for private keys, whose match spans lines."""

    @property
    def label(self) -> str:
        return label_for(self.id)

    @property
    def flags(self) -> int:
        return re.ASCII | (re.IGNORECASE if self.ignore_case else 0)

    @cached_property
    def regex(self) -> re.Pattern[str]:
        """The compiled exact rule."""
        return re.compile(self.pattern, self.flags)

    @cached_property
    def core_regex(self) -> re.Pattern[str]:
        """The compiled core, used to locate candidates when hyperscan is unavailable."""
        return re.compile(self.core, self.flags)


def _std(token: str) -> str:
    """gitleaks' unique-token form: a word boundary, the token as group 1, a terminator."""
    return rf"\b({token}){TERMINATOR}"


_ant_api_token = ANTHROPIC_API_PREFIX + r"03-[a-zA-Z0-9_\-]{93}AA"
_ant_admin_token = ANTHROPIC_ADMIN_PREFIX + r"-[a-zA-Z0-9_\-]{93}AA"
_B64 = "[a-zA-Z0-9+/]"

RULES: tuple[SecretRule, ...] = (
    SecretRule(
        "aws-access-token",
        r"\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b",
        core="(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}",
        keywords=("A3T", "AKIA", "ASIA", "ABIA", "ACCA"),
        entropy=3.0,
        prefix_len=4,
    ),
    SecretRule(
        "gcp-api-key",
        _std(r"AIza[\w-]{35}"),
        core=r"AIza[A-Za-z0-9_-]{35}",
        keywords=("AIza",),
        entropy=4.0,
        prefix_len=4,
    ),
    SecretRule(
        "azure-ad-client-secret",
        _AZURE_BEFORE + r"([a-zA-Z0-9_~.]{3}\dQ~[a-zA-Z0-9_~.-]{31,34})" + _AZURE_AFTER,
        core=r"[a-zA-Z0-9_~.]{3}[0-9]Q~[a-zA-Z0-9_~.-]{31}",
        keywords=("Q~",),
        entropy=3.0,
    ),
    SecretRule(
        "digitalocean-pat",
        _std(r"dop_v1_[a-f0-9]{64}"),
        core="dop_v1_[a-f0-9]{64}",
        keywords=("dop_v1_",),
        entropy=3.0,
        prefix_len=7,
    ),
    SecretRule(
        "digitalocean-access-token",
        _std(r"doo_v1_[a-f0-9]{64}"),
        core="doo_v1_[a-f0-9]{64}",
        keywords=("doo_v1_",),
        entropy=3.0,
        prefix_len=7,
    ),
    SecretRule(
        "anthropic-api-key",
        _std(_ant_api_token),
        core=_ant_api_token,
        keywords=(ANTHROPIC_API_PREFIX + "03-",),
        prefix_len=13,
    ),
    SecretRule(
        "anthropic-admin-api-key",
        _std(_ant_admin_token),
        core=_ant_admin_token,
        keywords=(ANTHROPIC_ADMIN_PREFIX + "-",),
        prefix_len=15,
    ),
    SecretRule(
        "openai-api-key",
        _std(
            r"sk-(?:proj|svcacct|admin)-(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})T3BlbkFJ"
            r"(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})\b|sk-[a-zA-Z0-9]{20}T3BlbkFJ[a-zA-Z0-9]{20}"
        ),
        core=(
            r"sk-(?:proj|svcacct|admin)-(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})T3BlbkFJ"
            r"|sk-[a-zA-Z0-9]{20}T3BlbkFJ"
        ),
        keywords=("T3BlbkFJ",),
        entropy=3.0,
    ),
    SecretRule(
        "huggingface-access-token",
        _std(r"hf_[a-zA-Z]{34}"),
        core="hf_[a-zA-Z]{34}",
        keywords=("hf_",),
        entropy=2.0,
        prefix_len=3,
    ),
    SecretRule(
        "github-pat",
        r"ghp_[0-9a-zA-Z]{36}",
        core="ghp_[0-9a-zA-Z]{36}",
        keywords=("ghp_",),
        entropy=3.0,
        prefix_len=4,
    ),
    SecretRule(
        "github-fine-grained-pat",
        r"github_pat_\w{82}",
        core="github_pat_[0-9A-Za-z_]{82}",
        keywords=("github_pat_",),
        entropy=3.0,
        prefix_len=11,
    ),
    SecretRule(
        "github-app-token",
        r"(?:ghu|ghs)_[0-9a-zA-Z]{36}",
        core="gh[us]_[0-9a-zA-Z]{36}",
        keywords=("ghu_", "ghs_"),
        entropy=3.0,
        prefix_len=4,
    ),
    SecretRule(
        "github-oauth",
        r"gho_[0-9a-zA-Z]{36}",
        core="gho_[0-9a-zA-Z]{36}",
        keywords=("gho_",),
        entropy=3.0,
        prefix_len=4,
    ),
    SecretRule(
        "github-refresh-token",
        r"ghr_[0-9a-zA-Z]{36}",
        core="ghr_[0-9a-zA-Z]{36}",
        keywords=("ghr_",),
        entropy=3.0,
        prefix_len=4,
    ),
    SecretRule(
        "gitlab-pat",
        r"glpat-[\w-]{20}",
        core="glpat-[0-9A-Za-z_-]{20}",
        keywords=("glpat-",),
        entropy=3.0,
        prefix_len=6,
    ),
    SecretRule(
        "gitlab-deploy-token",
        r"gldt-[0-9a-zA-Z_\-]{20}",
        core="gldt-[0-9a-zA-Z_-]{20}",
        keywords=("gldt-",),
        entropy=3.0,
        prefix_len=5,
    ),
    SecretRule(
        "slack-bot-token",
        r"xoxb-[0-9]{10,13}-[0-9]{10,13}[a-zA-Z0-9-]*",
        core="xoxb-[0-9]{10,13}-[0-9]{10}",
        keywords=("xoxb-",),
        entropy=3.0,
        prefix_len=5,
    ),
    SecretRule(
        "slack-user-token",
        r"xox[pe](?:-[0-9]{10,13}){3}-[a-zA-Z0-9-]{28,34}",
        core="xox[pe](?:-[0-9]{10,13}){3}-[a-zA-Z0-9-]{28}",
        keywords=("xoxp-", "xoxe-"),
        entropy=2.0,
        prefix_len=5,
    ),
    SecretRule(
        "slack-app-token",
        r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+",
        core="xapp-[0-9]-[A-Z0-9]+-[0-9]+-[a-z0-9]",
        keywords=("xapp-",),
        ignore_case=True,
        entropy=2.0,
        prefix_len=5,
    ),
    SecretRule(
        "twilio-api-key",
        r"SK[0-9a-fA-F]{32}",
        core="SK[0-9a-fA-F]{32}",
        keywords=("SK",),
        entropy=3.0,
        prefix_len=2,
    ),
    SecretRule(
        "sendgrid-api-token",
        _std(r"SG\.[a-zA-Z0-9=_\-.]{66}"),
        core=r"SG\.[a-zA-Z0-9=_.-]{66}",
        keywords=("SG.",),
        entropy=2.0,
        prefix_len=3,
    ),
    SecretRule(
        "npm-access-token",
        _std(r"npm_[a-zA-Z0-9]{36}"),
        core="npm_[a-zA-Z0-9]{36}",
        keywords=("npm_",),
        entropy=2.0,
        prefix_len=4,
    ),
    SecretRule(
        "pypi-upload-token",
        r"pypi-AgEIcHlwaS5vcmc[\w-]{50,1000}",
        core="pypi-AgEIcHlwaS5vcmc[0-9A-Za-z_-]{50}",
        keywords=("pypi-AgEIcHlwaS5vcmc",),
        entropy=3.0,
        prefix_len=20,
    ),
    SecretRule(
        "databricks-api-token",
        _std(r"dapi[a-f0-9]{32}(?:-\d)?"),
        core="dapi[a-f0-9]{32}",
        keywords=("dapi",),
        entropy=3.0,
        prefix_len=4,
    ),
    SecretRule(
        "hashicorp-tf-api-token",
        r"[a-zA-Z0-9]{14}\.atlasv1\.[a-zA-Z0-9\-_=]{60,70}",
        core=r"[a-zA-Z0-9]{14}\.atlasv1\.[a-zA-Z0-9_=-]{60}",
        keywords=(".atlasv1.",),
        entropy=3.5,
    ),
    SecretRule(
        "pulumi-api-token",
        _std(r"pul-[a-f0-9]{40}"),
        core="pul-[a-f0-9]{40}",
        keywords=("pul-",),
        entropy=2.0,
        prefix_len=4,
    ),
    SecretRule(
        "postman-api-token",
        _std(r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}"),
        core="PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}",
        keywords=("PMAK-",),
        entropy=3.0,
        prefix_len=5,
    ),
    SecretRule(
        "grafana-api-key",
        _std(r"eyJrIjoi[A-Za-z0-9+/]{70,400}={0,3}"),
        core="eyJrIjoi[A-Za-z0-9+/]{70}",
        keywords=("eyJrIjoi",),
        entropy=3.0,
        prefix_len=8,
    ),
    SecretRule(
        "grafana-cloud-api-token",
        _std(r"glc_[A-Za-z0-9+/]{32,400}={0,3}"),
        core="glc_[A-Za-z0-9+/]{32}",
        keywords=("glc_",),
        entropy=3.0,
        prefix_len=4,
    ),
    SecretRule(
        "grafana-service-account-token",
        _std(r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}"),
        core="glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}",
        keywords=("glsa_",),
        entropy=3.0,
        prefix_len=5,
    ),
    SecretRule(
        "sentry-user-token",
        _std(r"sntryu_[a-f0-9]{64}"),
        core="sntryu_[a-f0-9]{64}",
        keywords=("sntryu_",),
        entropy=3.5,
        prefix_len=7,
    ),
    SecretRule(
        "sentry-org-token",
        r"\bsntrys_eyJpYXQiO" + _B64 + "{10,200}(?:LCJyZWdpb25fdXJs|InJlZ2lvbl91cmwi|"
        "cmVnaW9uX3VybCI6)" + _B64 + "{10,200}={0,2}_" + _B64 + "{43}",
        core="sntrys_eyJpYXQiO" + _B64 + "{10}",
        keywords=("sntrys_eyJpYXQiO",),
        entropy=4.5,
        prefix_len=7,
    ),
    SecretRule(
        "stripe-access-token",
        _std(r"(?:sk|rk)_(?:test|live|prod)_[a-zA-Z0-9]{10,99}"),
        core="[sr]k_(?:test|live|prod)_[a-zA-Z0-9]{10}",
        keywords=("sk_", "rk_"),
        entropy=2.0,
        prefix_len=8,
    ),
    SecretRule(
        "shopify-access-token",
        r"shpat_[a-fA-F0-9]{32}",
        core="shpat_[a-fA-F0-9]{32}",
        keywords=("shpat_",),
        entropy=2.0,
        prefix_len=6,
    ),
    SecretRule(
        "shopify-shared-secret",
        r"shpss_[a-fA-F0-9]{32}",
        core="shpss_[a-fA-F0-9]{32}",
        keywords=("shpss_",),
        entropy=2.0,
        prefix_len=6,
    ),
    SecretRule(
        "private-key",
        r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S-]{64,}?"
        r"-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----",
        core="-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY",
        keywords=("-----begin",),
        ignore_case=True,
        multiline=True,
    ),
)

RULE_IDS: tuple[str, ...] = tuple(rule.id for rule in RULES)
RULES_BY_ID: dict[str, SecretRule] = {rule.id: rule for rule in RULES}
