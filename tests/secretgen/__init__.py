"""Test-time secret generation: a valid token of each of the 36 kinds, built from its format.

No secret-shaped literal lives in the repository: every token is assembled here at run time
from a seeded random source, so tests are repeatable and scanners of this repo stay quiet.
Tokens follow the real formats where they are known (GitHub's CRC32 checksum tail, Sentry's
base64 JSON, Grafana's base64 `{"k":…}` body), so they also exercise the realistic shapes.
"""

from __future__ import annotations

import base64
import json
import random
import string
import zlib
from collections.abc import Callable

ALNUM = string.ascii_letters + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
BASE32 = string.ascii_uppercase + "234567"
URLSAFE = ALNUM + "_-"
WORD = ALNUM + "_"

# Prefixes that would look like secrets if written whole.
SK = "s" + "k"
ANT = "-".join([SK, "ant"])
GH = "g" + "h"


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _base62(number: int, width: int) -> str:
    digits = string.digits + string.ascii_uppercase + string.ascii_lowercase
    out = ""
    while number:
        number, rem = divmod(number, 62)
        out = digits[rem] + out
    return out.rjust(width, "0")


def _github(rng: random.Random, prefix: str) -> str:
    # Real GitHub tokens end with a base62 CRC32 of the random part.
    body = _pick(rng, ALNUM, 30)
    return f"{prefix}_{body}{_base62(zlib.crc32(body.encode()), 6)}"


def _b64(data: str) -> str:
    return base64.b64encode(data.encode()).decode().rstrip("=")


def aws(rng: random.Random) -> str:
    prefix = rng.choice(["AKIA", "ASIA", "ABIA", "ACCA", "A3T" + rng.choice(UPPER_ALNUM)])
    return prefix + _pick(rng, BASE32, 16)


def gcp(rng: random.Random) -> str:
    return "AIza" + "Sy" + _pick(rng, URLSAFE[:-2], 33)


def azure(rng: random.Random) -> str:
    return (
        _pick(rng, ALNUM, 3)
        + rng.choice(string.digits)
        + "Q~"
        + _pick(rng, ALNUM + "_~.-", rng.randint(31, 33))
        + rng.choice(ALNUM)
    )


def digitalocean_pat(rng: random.Random) -> str:
    return "dop_v1_" + _pick(rng, HEX, 64)


def digitalocean_access(rng: random.Random) -> str:
    return "doo_v1_" + _pick(rng, HEX, 64)


def anthropic(rng: random.Random) -> str:
    return "-".join([ANT, "api03", ""]) + _pick(rng, URLSAFE, 93) + "AA"


def anthropic_admin(rng: random.Random) -> str:
    return "-".join([ANT, "admin01", ""]) + _pick(rng, URLSAFE, 93) + "AA"


def openai(rng: random.Random) -> str:
    marker = "T3Blbk" + "FJ"
    kind = rng.choice(["proj", "svcacct", "admin", "legacy"])
    if kind == "legacy":
        return f"{SK}-" + _pick(rng, ALNUM, 20) + marker + _pick(rng, ALNUM, 20)
    n = 58 if kind == "admin" else 74
    # The last character must be a word character (the rule has an inner `\b`).
    return f"{SK}-{kind}-" + _pick(rng, URLSAFE, n) + marker + _pick(rng, URLSAFE, n - 1) + "A"


def huggingface(rng: random.Random) -> str:
    return "hf_" + _pick(rng, string.ascii_letters, 34)


def github_pat(rng: random.Random) -> str:
    return _github(rng, GH + "p")


def github_fine_grained(rng: random.Random) -> str:
    return "github_" + "pat_" + _pick(rng, ALNUM, 22) + "_" + _pick(rng, ALNUM, 59)


def github_app(rng: random.Random) -> str:
    return _github(rng, GH + rng.choice("us"))


def github_oauth(rng: random.Random) -> str:
    return _github(rng, GH + "o")


def github_refresh(rng: random.Random) -> str:
    return _github(rng, GH + "r")


def gitlab_pat(rng: random.Random) -> str:
    return "glpat-" + _pick(rng, URLSAFE, 20)


def gitlab_deploy(rng: random.Random) -> str:
    return "gldt-" + _pick(rng, URLSAFE, 20)


def slack_bot(rng: random.Random) -> str:
    return (
        "xoxb-"
        + _pick(rng, string.digits, rng.randint(10, 13))
        + "-"
        + _pick(rng, string.digits, rng.randint(10, 13))
        + "-"
        + _pick(rng, ALNUM, 24)
    )


def slack_user(rng: random.Random) -> str:
    groups = "-".join(_pick(rng, string.digits, rng.randint(10, 13)) for _ in range(3))
    return f"xox{rng.choice('pe')}-{groups}-" + _pick(rng, HEX, 32)


def slack_app(rng: random.Random) -> str:
    return (
        "xapp-1-A"
        + _pick(rng, UPPER_ALNUM, 10)
        + "-"
        + _pick(rng, string.digits, 13)
        + "-"
        + _pick(rng, HEX, 64)
    )


def twilio(rng: random.Random) -> str:
    return "S" + "K" + _pick(rng, HEX, 32)


def sendgrid(rng: random.Random) -> str:
    return "SG." + _pick(rng, URLSAFE, 22) + "." + _pick(rng, URLSAFE, 43)


def npm(rng: random.Random) -> str:
    return "npm_" + _pick(rng, ALNUM, 36)


def pypi(rng: random.Random) -> str:
    return "pypi-" + "AgEIcHlwaS5vcmc" + _pick(rng, URLSAFE, rng.randint(50, 160))


def databricks(rng: random.Random) -> str:
    return "dapi" + _pick(rng, HEX, 32) + rng.choice(["", "-2"])


def hashicorp(rng: random.Random) -> str:
    return _pick(rng, ALNUM, 14) + ".atlas" + "v1." + _pick(rng, ALNUM + "_=-", rng.randint(60, 70))


def pulumi(rng: random.Random) -> str:
    return "pul-" + _pick(rng, HEX, 40)


def postman(rng: random.Random) -> str:
    return "PMAK-" + _pick(rng, HEX, 24) + "-" + _pick(rng, HEX, 34)


def grafana_api(rng: random.Random) -> str:
    body = json.dumps({"k": _pick(rng, ALNUM, 40), "n": "ci", "id": rng.randint(1, 99)})
    return _b64(body.replace(" ", ""))


def grafana_cloud(rng: random.Random) -> str:
    body = {"o": str(rng.randint(10**5, 10**6)), "n": "stack", "k": _pick(rng, ALNUM, 24)}
    return "glc_" + _b64(json.dumps(body, separators=(",", ":")))


def grafana_service_account(rng: random.Random) -> str:
    return "glsa_" + _pick(rng, ALNUM, 32) + "_" + _pick(rng, HEX, 8)


def sentry_user(rng: random.Random) -> str:
    return "sntryu_" + _pick(rng, HEX, 64)


def sentry_org(rng: random.Random) -> str:
    org = _pick(rng, string.ascii_lowercase, rng.randint(3, 9))
    claims = {
        "iat": rng.randint(1_600_000_000, 1_800_000_000),
        "url": "https://sentry.io",
        "region_url": "https://us.sentry.io",
        "org": org,
    }
    encoded = base64.b64encode(json.dumps(claims, separators=(",", ":")).encode()).decode()
    return "sntrys_" + encoded + "_" + _pick(rng, ALNUM + "+/", 42) + rng.choice(ALNUM)


def stripe(rng: random.Random) -> str:
    return f"{rng.choice([SK, 'rk'])}_{rng.choice(['live', 'test', 'prod'])}_" + _pick(
        rng, ALNUM, rng.choice([24, 99])
    )


def shopify_access(rng: random.Random) -> str:
    return "shpat_" + _pick(rng, HEX, 32)


def shopify_shared(rng: random.Random) -> str:
    return "shpss_" + _pick(rng, HEX, 32)


def private_key(rng: random.Random) -> str:
    kind = rng.choice(["RSA ", "EC ", "OPENSSH ", "ENCRYPTED ", "", "PGP "])
    tail = " BLOCK" if kind == "PGP " else ""
    lines = [_pick(rng, ALNUM + "+/", 64) for _ in range(rng.randint(2, 6))]
    dashes = "-" * 5
    return (
        f"{dashes}BEGIN {kind}PRIVATE KEY{tail}{dashes}\n"
        + "\n".join(lines)
        + f"\n{dashes}END {kind}PRIVATE KEY{tail}{dashes}"
    )


GENERATORS: dict[str, Callable[[random.Random], str]] = {
    "aws-access-token": aws,
    "gcp-api-key": gcp,
    "azure-ad-client-secret": azure,
    "digitalocean-pat": digitalocean_pat,
    "digitalocean-access-token": digitalocean_access,
    "anthropic-api-key": anthropic,
    "anthropic-admin-api-key": anthropic_admin,
    "openai-api-key": openai,
    "huggingface-access-token": huggingface,
    "github-pat": github_pat,
    "github-fine-grained-pat": github_fine_grained,
    "github-app-token": github_app,
    "github-oauth": github_oauth,
    "github-refresh-token": github_refresh,
    "gitlab-pat": gitlab_pat,
    "gitlab-deploy-token": gitlab_deploy,
    "slack-bot-token": slack_bot,
    "slack-user-token": slack_user,
    "slack-app-token": slack_app,
    "twilio-api-key": twilio,
    "sendgrid-api-token": sendgrid,
    "npm-access-token": npm,
    "pypi-upload-token": pypi,
    "databricks-api-token": databricks,
    "hashicorp-tf-api-token": hashicorp,
    "pulumi-api-token": pulumi,
    "postman-api-token": postman,
    "grafana-api-key": grafana_api,
    "grafana-cloud-api-token": grafana_cloud,
    "grafana-service-account-token": grafana_service_account,
    "sentry-user-token": sentry_user,
    "sentry-org-token": sentry_org,
    "stripe-access-token": stripe,
    "shopify-access-token": shopify_access,
    "shopify-shared-secret": shopify_shared,
    "private-key": private_key,
}


def make_token(rule_id: str, seed: int | str = 0) -> str:
    """A valid token for `rule_id`, the same for the same seed."""
    return GENERATORS[rule_id](random.Random(f"{rule_id}:{seed}"))


# --- memory-file contexts -------------------------------------------------------------------
# Each wraps a token the way a memory file might hold it. Every one leaves a terminator that all
# rules accept (whitespace, a quote, a backtick, or the end of the text) right after the token.

CONTEXTS: dict[str, Callable[[str], str]] = {
    "prose": lambda t: f"The staging deploy uses {t} for now, rotate it soon.\n",
    "inline-code": lambda t: f"- Set the key to `{t}` before running the smoke tests.\n",
    "code-fence": lambda t: (
        f"Run this first:\n\n```bash\nexport SERVICE_TOKEN={t}\n./deploy.sh\n```\n"
    ),
    "frontmatter": lambda t: (
        f"---\nname: deploy creds\ndescription: token for CI\ntoken: {t}\n---\n\nBody.\n"
    ),
    "frontmatter-quoted": lambda t: f'---\nname: creds\napi_key: "{t}"\ntype: reference\n---\n',
    "table": lambda t: f"| service | key |\n|---|---|\n| ci | {t} |\n",
    "env-line": lambda t: f"SERVICE_API_KEY={t}\nOTHER=1\n",
    "json": lambda t: f'{{"name": "ci", "token": "{t}", "enabled": true}}\n',
    "python": lambda t: f"client = Client(api_key='{t}')\n",
    "end-of-file": lambda t: f"# Keys\n\nlast one: {t}",
    "crlf": lambda t: f"line one\r\nkey {t}\r\nline three\r\n",
    "tab": lambda t: f"key\t{t}\tvalue\n",
    "nbsp": lambda t: f"key {t}\u00a0is shown here\n",
    "escaped-newline": lambda t: f'"env": "KEY={t}\\nNEXT=1"\n',
    "list-item": lambda t: f"* token:\n  {t}\n* next item\n",
}
