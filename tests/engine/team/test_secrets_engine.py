"""The fast engine: hyperscan and the `re` fallback agree with each other and with the rules
run one at a time, on a large generated corpus and on hypothesis-generated text."""

from __future__ import annotations

import json
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from secretgen import CONTEXTS, GENERATORS, make_token
from secretgen.corpus import corpus

from workbench.engine.errors import UserInputError
from workbench.engine.team.secrets.prefilter import (
    RegexPrefilter,
    get_prefilter,
    hyperscan_available,
)
from workbench.engine.team.secrets.rules import RULES
from workbench.engine.team.secrets.scanner import (
    find_secrets,
    find_secrets_many,
    naive_matches,
    scan_for_secrets,
    scan_many,
)

needs_hyperscan = pytest.mark.skipif(not hyperscan_available(), reason="hyperscan not installed")
BACKENDS = ["re", pytest.param("hyperscan", marks=needs_hyperscan)]
DASHES = "-" * 5  # so that this file holds no private-key block of its own


def spans(text: str, backend: str) -> list[tuple[str, int, int]]:
    return [(f.rule_id, f.start, f.end) for f in find_secrets(text, backend=backend)]


def naive(text: str) -> list[tuple[str, int, int]]:
    return sorted(
        ((RULES[i].id, start, end) for i, start, end in naive_matches(text)),
        key=lambda s: (s[1], [r.id for r in RULES].index(s[0])),
    )


def naive_rule_ids(text: str) -> list[str]:
    return list(dict.fromkeys(RULES[i].id for i, _s, _e in sorted(naive_matches(text))))


@pytest.fixture(scope="module")
def big_corpus() -> list[str]:
    return corpus(600, seed=11, secret_rate=0.15)


@needs_hyperscan
def test_hyperscan_and_fallback_agree_with_one_rule_at_a_time_on_a_large_corpus(big_corpus):
    joined = "\n".join(big_corpus)
    expected = naive(joined)
    assert len(expected) > 200, "the corpus should carry plenty of secrets"
    assert {rule_id for rule_id, _s, _e in expected} == {r.id for r in RULES}
    assert spans(joined, "hyperscan") == expected
    assert spans(joined, "re") == expected


@needs_hyperscan
def test_per_file_and_batched_scans_agree(big_corpus):
    items = [(f"file{i}.md", text) for i, text in enumerate(big_corpus)]
    batched_hs = find_secrets_many(items, backend="hyperscan")
    batched_re = find_secrets_many(items, backend="re")
    one_by_one = [find_secrets(text, path=path, backend="hyperscan") for path, text in items]
    assert batched_hs == batched_re == one_by_one
    verdicts = scan_many([text for _p, text in items], backend="hyperscan")
    assert verdicts == [scan_for_secrets(text, backend="re") for _p, text in items]
    assert [[m.rule_id for m in v] for v in verdicts] == [
        naive_rule_ids(text) for _p, text in items
    ]


@pytest.mark.parametrize("backend", BACKENDS)
def test_locations_are_one_based_lines_and_columns(backend: str):
    token = make_token("github-pat", 7)
    text = "first line\nsecond 🚀 line with " + token + " end\n"
    (finding,) = find_secrets(text, path="team/x.md", backend=backend)
    assert finding.line == 2
    assert text.split("\n")[1][finding.column - 1 :].startswith(token)
    assert finding.end_column - finding.column == len(token)
    assert text[finding.start : finding.end] == token
    assert finding.path == "team/x.md"


@pytest.mark.parametrize("backend", BACKENDS)
def test_private_key_spans_lines(backend: str):
    key = make_token("private-key", 3)
    text = "intro\n```\n" + key + "\n```\n"
    (finding,) = find_secrets(text, backend=backend)
    assert finding.rule_id == "private-key"
    assert (finding.line, finding.end_line) == (3, 3 + key.count("\n"))


def test_fingerprints_are_stable_path_bound_and_never_the_secret():
    token = make_token("stripe-access-token", 2)
    text = f"key: {token}\n"
    (a,) = find_secrets(text, path="team/a.md")
    (b,) = find_secrets("moved down\n" * 3 + text, path="team/a.md")
    (c,) = find_secrets(text, path="team/b.md")
    assert a.fingerprint == b.fingerprint != c.fingerprint
    assert len(a.fingerprint) == 32 and token not in a.fingerprint
    assert token not in repr(a) and token not in str(a.to_json())


@pytest.mark.parametrize("backend", BACKENDS)
def test_scan_for_secrets_gives_one_match_per_rule_in_rule_order(backend: str):
    text = "\n".join(
        make_token(rule_id, seed) for rule_id in reversed(list(GENERATORS)) for seed in (1, 2)
    )
    assert [m.rule_id for m in scan_for_secrets(text, backend=backend)] == [r.id for r in RULES]


@needs_hyperscan
def test_concurrent_scans_from_threads_agree(big_corpus):
    texts = big_corpus[:120]
    expected = [find_secrets(t, backend="hyperscan") for t in texts]
    results: dict[int, list] = {}
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            for _ in range(3):
                results[worker] = [find_secrets(t, backend="hyperscan") for t in texts]
        except BaseException as exc:  # noqa: BLE001 - surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert all(result == expected for result in results.values())


def test_unknown_engine_is_a_usage_error():
    with pytest.raises(UserInputError):
        get_prefilter("turbo")


def test_the_default_engine_can_be_forced_to_the_fallback():
    from workbench.engine.team.secrets.prefilter import set_default_backend

    token = make_token("gitlab-pat", 1)
    try:
        set_default_backend("re")
        assert get_prefilter().name == "re"
        assert [m.rule_id for m in scan_for_secrets(f"k {token}")] == ["gitlab-pat"]
        with pytest.raises(UserInputError):
            set_default_backend("turbo")
        assert get_prefilter().name == "re"
    finally:
        set_default_backend("auto")


def test_without_hyperscan_auto_falls_back_with_identical_findings(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    sample = tmp_path / "sample.md"
    sample.write_text("\n".join(corpus(40, seed=3, secret_rate=0.4)))
    code = (
        "import json, sys\n"
        "sys.modules['hyperscan'] = None  # as if it were not installed\n"
        "from workbench.engine.team.secrets.prefilter import get_prefilter\n"
        "from workbench.engine.team.secrets.scanner import find_secrets\n"
        f"text = open({str(sample)!r}, encoding='utf-8').read()\n"
        "print(json.dumps([get_prefilter().name, [f.to_json() for f in find_secrets(text)]]))\n"
    )
    repo = Path(__file__).resolve().parents[3]
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=repo, check=True
    )
    name, findings = json.loads(out.stdout)
    assert name == "re"
    expected = [f.to_json() for f in find_secrets(sample.read_text(encoding="utf-8"))]
    assert findings == expected and len(expected) > 10


def test_forced_fallback_reports_its_name():
    assert get_prefilter("re").name == "re"


def test_auto_moves_to_hyperscan_once_compiling_pays():
    from workbench.engine.team.secrets.prefilter import AutoPrefilter
    from workbench.engine.team.secrets.scanner import _findings

    auto = AutoPrefilter()
    small = "\n".join(corpus(5, seed=1, secret_rate=0.5))
    before = _findings(small, auto.candidates(small), "x.md")
    assert auto.name == "re" and before
    big = small * (AutoPrefilter.SWITCH_AFTER_CHARS // len(small) + 1)
    auto.candidates(big)
    assert auto.name == ("hyperscan" if hyperscan_available() else "re")
    assert _findings(small, auto.candidates(small), "x.md") == before


# --- JavaScript semantics that Python's `re` would get wrong -------------------------------


@pytest.mark.parametrize("terminator", ["\u00a0", "\u2028", "\ufeff", "\u3000", "\u205f"])
def test_javascript_whitespace_terminates_a_token(terminator: str):
    token = make_token("npm-access-token", 4)
    assert [m.rule_id for m in scan_for_secrets(f"x {token}{terminator}y")] == ["npm-access-token"]


@pytest.mark.parametrize("not_whitespace", ["\x85", "\x1c", "\x1f"])
def test_python_only_whitespace_does_not_terminate_a_token(not_whitespace: str):
    # Python's Unicode `\s` includes these; JavaScript's does not, so Claude Code misses them.
    token = make_token("npm-access-token", 4)
    assert scan_for_secrets(f"x {token}{not_whitespace}y") == []


def test_case_insensitive_rules_fold_ascii_only():
    kelvin = "\u212a"  # folds to "k" in Unicode, not in JavaScript without the u flag
    key = make_token("private-key", 1).replace("KEY", kelvin + "EY")
    assert "private-key" not in [m.rule_id for m in scan_for_secrets(key)]
    lowered = make_token("private-key", 1).lower()
    assert [m.rule_id for m in scan_for_secrets(lowered)] == ["private-key"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_private_key_body_is_counted_in_utf16_units(backend: str):
    header, footer = f"{DASHES}BEGIN PRIVATE KEY{DASHES}", f"{DASHES}END PRIVATE KEY{DASHES}"
    # 40 emoji are 80 UTF-16 units: Claude Code sees a long enough body.
    astral = f"note 😀\n{header}{'🔑' * 40}{footer}\n"
    assert [f.rule_id for f in find_secrets(astral, backend=backend)] == ["private-key"]
    (finding,) = find_secrets(astral, backend=backend)
    assert astral[finding.start : finding.end] == f"{header}{'🔑' * 40}{footer}"
    # 40 BMP characters are 40 units: too short.
    assert find_secrets(f"{header}{'é' * 40}{footer}", backend=backend) == []
    assert find_secrets(f"{header}{'x' * 63}{footer}", backend=backend) == []
    assert len(find_secrets(f"{header}{'x' * 64}{footer}", backend=backend)) == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_private_key_needs_a_footer_after_the_body(backend: str):
    header = f"{DASHES}BEGIN RSA PRIVATE KEY{DASHES}\n"
    body = "A" * 80
    assert find_secrets(header + body, backend=backend) == []
    certificate_end = f"\n{DASHES}END CERTIFICATE{DASHES}"
    assert find_secrets(header + body + certificate_end, backend=backend) == []
    text = header + body + f"\n{DASHES}END RSA PRIVATE KEY{DASHES}"
    assert [f.rule_id for f in find_secrets(text, backend=backend)] == ["private-key"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_many_headers_with_wrong_footers_agree_with_the_rule(backend: str):
    block = (
        f"{DASHES}BEGIN EC PRIVATE KEY{DASHES}\n"
        + "Q" * 70
        + f"\n{DASHES}END CERTIFICATE{DASHES}\n"
    )
    tail = "Z" * 70 + f"\n{DASHES}END EC PRIVATE KEY{DASHES}\n"
    for text in (block * 300, block * 300 + tail, tail + block * 300):
        assert spans(text, backend) == naive(text)


# --- property tests -------------------------------------------------------------------------

_TOKENS = [make_token(rule_id, seed) for rule_id in GENERATORS for seed in range(2)]
_FRAGMENTS = [
    "AKIA",
    "ghp_",
    "Q~",
    "-----BEGIN ",
    "PRIVATE KEY-----",
    "-----END ",
    "SK",
    "sk_live_",
    ".atlasv1.",
    "xoxb-",
    "xapp-1-",
    "\\n",
    "\n",
    " ",
    ".",
    "`",
    '"',
    "'",
    "\u00a0",
    "🚀",
    "é",
    "=",
    "(",
]
_pieces = st.one_of(
    st.sampled_from(_TOKENS),
    st.sampled_from(_FRAGMENTS),
    st.text(alphabet="abcdefABCDEF0123456789_-~./+=", max_size=12),
    st.text(max_size=6),
)
_texts = st.lists(_pieces, max_size=24).map("".join)


@needs_hyperscan
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_texts)
def test_property_engines_agree_and_never_crash(text: str):
    expected = naive(text)
    assert spans(text, "hyperscan") == expected
    assert spans(text, "re") == expected
    ids = naive_rule_ids(text)
    assert [m.rule_id for m in scan_for_secrets(text, backend="hyperscan")] == [
        r.id for r in RULES if r.id in ids
    ]


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(sorted(GENERATORS)), st.sampled_from(sorted(CONTEXTS)), st.integers(0, 10**6)
)
def test_property_every_generated_token_is_found_in_every_context(
    rule_id: str, context: str, seed: int
):
    text = CONTEXTS[context](make_token(rule_id, seed))
    assert rule_id in [m.rule_id for m in scan_for_secrets(text)]


@settings(max_examples=300, deadline=None)
@given(_texts)
def test_property_the_keyword_gate_never_hides_a_candidate(text: str):
    prefilter = RegexPrefilter()
    lowered = text.lower()
    if prefilter.located(text, lowered):
        assert prefilter.may_match(lowered)
    assert prefilter.candidates(text) == prefilter.located(text, lowered)
