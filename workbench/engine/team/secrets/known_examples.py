"""Published example keys: credentials that vendors print in their own docs and SDKs.

They match the rules exactly and look random, so no heuristic can tell them from a live key;
only their being published can. Each is kept here as the sha256 of the secret text (what the
rule's capture group holds), never as the key itself, so this file is no list of strings to
paste. A match is *labelled* a placeholder; the team write guard and the push refuse it all
the same, as Claude Code does.

Sources (public):
- the Firebase Android SDK's sample API keys, which gitleaks' `gcp-api-key` rule allowlists;
- Stripe's API reference, which printed two test-mode secret keys in its examples for years;
- GitHub's documentation example of a classic personal access token.
"""

from __future__ import annotations

import hashlib

_FIREBASE_SDK = "a sample key from the Firebase Android SDK"
_STRIPE_DOCS = "the test key printed in Stripe's API reference"
_GITHUB_DOCS = "the example token in GitHub's documentation"

KNOWN_EXAMPLES: dict[str, dict[str, str]] = {
    "gcp-api-key": {
        digest: _FIREBASE_SDK
        for digest in (
            "f56e323494a6ffc2064e7a955908957d84f0755e5f975dabd64328d0359a8f7c",
            "2037abcaffb2b77785da716cf7ccff4ff4d00c4ea930db0167b7d71f50af7eb4",
            "3f370c9dd8225c63b5c77de1f785edc9712958f18bb612d5fa2e0ae33aeca682",
            "e4a5542bb7fd7b67e943c71ad29c34b5972c9840597e7eda53e666f44d5da0b9",
            "a19f89ab3555eac10c40741f6df79ecf0935998f15569f8db9d67bce0181fff6",
            "0b476bdf9acf2123d547b5ae76f1e59884d8ec9553ee0c47e9f31fd4768f3f3c",
            "eb540d2b6ee2a0a47c5779bc8a0141784c6b753840d4c6f4e2428a6e86e9e0b1",
            "37f8f09bdf12c2f2eae4ead7273a62ddb0c23459cbf902892f282b57f7ed6619",
            "8731261cb72d86267a32a532ebd3df429e2144e5e4ced7e13568bc9e6c8fb1b1",
            "49f777db995e8260da7ca9ffdf0c08d66f0453e97ec967018baf2cdfe3b582d0",
            "27a9a42931dff7eb2f8434e20a9bce976ea364e7bee49187f19d5cfeca9c7045",
            "dc0fcf046c61640cbd1e8b999ada3262d722c2ca4bf42dceac999020ffdbb614",
            "4c98242dcadc8b29005c6b4aad526552d5ea1842149154c0694adeec75847583",
            "ea9bb1082cf95663f5faca23b8b15ef2aa0fce0a5c6df9c32dcb85b2e0a4513d",
            "3a8b61d0f636b007840c0d40ba12bcf48465dc054cdc1a68704a33521d84b665",
            "a6c814bc555ae62c7bd8b58ec07bf559c7ed3a009976a1e0acc9cef0d4473b41",
        )
    },
    "stripe-access-token": {
        "2cafc0970149a84f3b9e62eaf169f36f59907a3b3e31f7b82e68c69cd27f7326": _STRIPE_DOCS,
        "f2d6ca16515033e5dce14eba840b979d27b5cbae24bb3e5bf484339667f86397": _STRIPE_DOCS,
    },
    "github-pat": {
        "3543c50b0cb9cea8e55eb1f529b79f043cb250d485fde7b66cabbb5183add7da": _GITHUB_DOCS,
    },
}


def known_example(rule_id: str, secret: str) -> str | None:
    """Where `secret` was published as an example, or None (hashed only for rules that have
    known examples, so other findings cost nothing)."""
    table = KNOWN_EXAMPLES.get(rule_id)
    if table is None:
        return None
    return table.get(hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest())
