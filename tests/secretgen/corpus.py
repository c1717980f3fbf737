"""Generated memory-like text: frontmatter, prose, lists, tables and code fences.

Used by the parity tests and by `benchmarks/bench_secrets.py`. Besides real tokens it sprinkles
in the things that make a prefilter work: near misses, keyword fragments (`AKIA`, `ghp_`,
`SK`, `Q~`, `-----BEGIN`), identifiers, URLs, non-ASCII text and emoji.
"""

from __future__ import annotations

import random

from secretgen import CONTEXTS, GENERATORS

WORDS = (
    "the build uses pnpm workspaces and every package has its own tsconfig the api server "
    "reads settings from env vars deploys go through the staging cluster first remember to "
    "run migrations before seeding user prefers small focused commits with clear messages "
    "tests must not hit the network integration suites run nightly on the shared runner "
    "feature flags live in launchdarkly the mobile app pins react native we switched from "
    "jest to vitest in march the docs site is built with astro and deployed on every merge"
).split()

NOISE = (
    "AKIA is the access-key prefix",
    "ghp_ tokens are classic PATs",
    "ASK the TASK owner about RISK",
    "url: https://example.com/a~b/Q~c",
    "css selector `a ~ .b` and `x~.y`",
    "-----BEGIN CERTIFICATE----- is public",
    "npm_config_cache=/tmp/npm",
    "sk_test_ is the stripe test prefix",
    "hf_hub_download(repo_id)",
    "xoxb- tokens are bot tokens",
    "dapi prefix, pul- prefix, PMAK- prefix",
    "café naïve über straße 東京 🚀 ✨",
    "SG.sendgrid style",
    "eyJhbGciOiJIUzI1NiJ9.payload.sig",
    "glc_ and glsa_ prefixes",
    "sntryu_ sentry user tokens",
)


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(6, 18))]
    return " ".join(words).capitalize() + "."


def memory_file(rng: random.Random, secret_rate: float = 0.0, seed_tag: str = "") -> str:
    """One memory file of roughly 1-4 KB."""
    parts = [
        "---",
        f"name: {rng.choice(WORDS)} {rng.choice(WORDS)}",
        f"description: {_sentence(rng)}",
        f"type: {rng.choice(['user', 'feedback', 'project', 'reference'])}",
        "---",
        "",
    ]
    for _ in range(rng.randint(4, 14)):
        kind = rng.random()
        if kind < 0.45:
            parts.append(" ".join(_sentence(rng) for _ in range(rng.randint(1, 4))))
        elif kind < 0.65:
            parts.extend(f"- {_sentence(rng)}" for _ in range(rng.randint(2, 5)))
        elif kind < 0.75:
            parts.append("| key | value |\n|---|---|\n| region | eu-west-1 |\n| retries | 3 |")
        elif kind < 0.85:
            parts.append("```bash\npnpm install\npnpm test --filter api\n```")
        else:
            parts.append(rng.choice(NOISE))
        if secret_rate and rng.random() < secret_rate:
            rule_id = rng.choice(sorted(GENERATORS))
            token = GENERATORS[rule_id](rng)
            parts.append(CONTEXTS[rng.choice(sorted(CONTEXTS))](token))
        parts.append("")
    return "\n".join(parts)


def corpus(n_files: int, *, seed: int = 0, secret_rate: float = 0.0) -> list[str]:
    """`n_files` memory files; about `secret_rate` of their blocks carry a real token."""
    rng = random.Random(seed)
    return [memory_file(rng, secret_rate) for _ in range(n_files)]
