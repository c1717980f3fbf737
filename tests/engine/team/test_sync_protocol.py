"""The protocol's pure parts: batching, hashing, retry delays, ETags, state on disk."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from workbench.engine.team.sync.protocol import (
    EMPTY_BODY_BYTES,
    MAX_PUT_BODY_BYTES,
    batch_delta_by_bytes,
    entry_hash,
    etag_from_header,
    js_sort_key,
    put_body,
    quoted_etag,
    retry_delay,
)
from workbench.engine.team.sync.state import SyncState, SyncStateStore, normalize_server


def _cost(key: str, value: str) -> int:
    return (
        len(json.dumps(key, ensure_ascii=False).encode())
        + len(json.dumps(value, ensure_ascii=False).encode())
        + 2
    )


def test_entry_hash_is_sha256_of_utf8():
    text = "café ☕\n"
    assert entry_hash(text) == "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_batches_fill_greedily_to_exactly_the_limit():
    # Two entries whose costs sum to exactly 200,000 with the 14-byte empty body fit together;
    # one more byte pushes the second into a new batch.
    first_value = "a" * 100_000
    first = _cost("a.md", first_value)
    rest = MAX_PUT_BODY_BYTES - EMPTY_BODY_BYTES - first
    second_value = "b" * (rest - _cost("b.md", ""))
    assert _cost("b.md", second_value) == rest
    exact = batch_delta_by_bytes({"b.md": second_value, "a.md": first_value})
    assert [list(b) for b in exact] == [["a.md", "b.md"]]
    # The estimate counts a comma after every entry; the real body has one fewer.
    assert len(put_body(exact[0])) == MAX_PUT_BODY_BYTES - 1
    over = batch_delta_by_bytes({"a.md": first_value, "b.md": second_value + "b"})
    assert [list(b) for b in over] == [["a.md"], ["b.md"]]


def test_an_oversized_entry_travels_alone_and_order_is_sorted():
    delta = {"c.md": "c", "a.md": "x" * 300_000, "b.md": "b"}
    batches = batch_delta_by_bytes(delta)
    assert [list(b) for b in batches] == [["a.md"], ["b.md", "c.md"]]
    assert batch_delta_by_bytes({}) == []


def test_batch_costs_count_utf8_and_json_escapes():
    value = 'é"\n' * 15_000  # 2 + 2 + 2 bytes per repetition once JSON-escaped
    assert _cost("k", value) == len('"k"') + 2 + 6 * 15_000 + 2
    assert len(batch_delta_by_bytes({"k": value, "l": value})) == 1
    assert len(batch_delta_by_bytes({"k": value, "l": value + value})) == 2


def test_every_batch_body_stays_under_the_limit():
    delta = {f"note-{i:04}.md": ("w" * (i * 37 % 9_000)) for i in range(400)}
    batches = batch_delta_by_bytes(delta)
    assert sum(len(b) for b in batches) == 400
    for batch in batches:
        assert len(put_body(batch)) <= MAX_PUT_BODY_BYTES


def test_keys_sort_by_utf16_code_units_like_javascript():
    keys = ["\U0001f600.md", "\uff5e.md", "a.md"]  # astral (surrogates D83D…) sorts before U+FF5E
    assert sorted(keys, key=js_sort_key) == ["a.md", "\U0001f600.md", "\uff5e.md"]
    assert sorted(keys) != sorted(keys, key=js_sort_key)


def test_retry_delay_doubles_caps_and_adds_at_most_a_quarter():
    assert retry_delay(1, lambda: 0.0) == 0.5
    assert retry_delay(2, lambda: 0.0) == 1.0
    assert retry_delay(3, lambda: 1.0) == 2.5
    assert retry_delay(10, lambda: 0.0) == 32.0
    assert retry_delay(10, lambda: 1.0) == 40.0


@pytest.mark.parametrize(
    ("header", "tag"),
    [('"sha256:abc"', "sha256:abc"), ('W/"sha256:abc"', "sha256:abc"), ("", None), (None, None)],
)
def test_etag_header_parsing(header, tag):
    assert etag_from_header(header) == tag


def test_quoted_etag_strips_embedded_quotes():
    assert quoted_etag('sha256:"x"') == '"sha256:x"'


def test_state_round_trips_and_tolerates_garbage(tmp_path: Path):
    store = SyncStateStore(tmp_path)
    state = store.load("HTTP://Example.COM:8765/", "acme/widgets")
    assert state.server == "http://example.com:8765"
    state.last_known_checksum = "sha256:1"
    state.server_checksums = {"a.md": "sha256:2"}
    state.server_max_entries = 10
    state.suppress("http_401", ["a.md"])
    state.last_synced = {"a.md": "sha256:2"}
    state.record({"operation": "push", "status": "error"})
    store.save(state)
    path = store.path_for("http://example.com:8765", "acme/widgets")
    assert path.stat().st_mode & 0o777 == 0o600
    again = store.load("http://example.com:8765/", "acme/widgets")
    assert again.to_json() == state.to_json()

    path.write_text("{not json")
    assert (
        store.load("http://example.com:8765", "acme/widgets").to_json()
        == SyncState("http://example.com:8765", "acme/widgets").to_json()
    )
    path.write_text(json.dumps({"serverChecksums": {"a": 1}, "serverMaxEntries": True}))
    odd = store.load("http://example.com:8765", "acme/widgets")
    assert odd.server_checksums == {} and odd.server_max_entries is None


def test_state_is_separate_per_server_and_repo(tmp_path: Path):
    store = SyncStateStore(tmp_path)
    paths = {
        store.path_for("http://a:1", "o/r"),
        store.path_for("http://a:2", "o/r"),
        store.path_for("http://a:1", "o/s"),
        store.path_for("http://a:1", "o/r", "/home/me/clone-2/memory/team/"),
    }
    assert len(paths) == 4


def test_history_is_bounded():
    state = SyncState("http://a", "o/r")
    for i in range(500):
        state.record({"n": i})
    assert len(state.history) == 200 and state.history[-1] == {"n": 499}


def test_normalize_server():
    assert normalize_server(" HTTPS://Team.Example/base/ ") == "https://team.example/base"
