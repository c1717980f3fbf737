"""The team server's HTTP protocol, exercised over loopback with a plain HTTP client."""

from __future__ import annotations

import hashlib
import re
import threading

import httpx
import pytest

from workbench.server import TeamServer, parse_token_specs
from workbench.server.store import repo_checksum

TOKEN = "-".join(["api", "test", "token"])
OTHER_ORG_TOKEN = "-".join(["api", "rival", "token"])
PATH = "/api/claude_code/team_memory"


@pytest.fixture
def server(team_db):
    # Every test here runs against both stores (team_db is parametrized).
    tokens = {TOKEN: "acme", OTHER_ORG_TOKEN: "rival"}
    with TeamServer(team_db("db"), tokens, max_entries=5, max_body_bytes=4_000) as srv:
        yield srv


@pytest.fixture
def http(server: TeamServer):
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}) as c:
        yield c


def put(client: httpx.Client, entries: dict, repo: str = "acme/widgets", **headers: str):
    return client.put(PATH, params={"repo": repo}, json={"entries": entries}, headers=headers)


def get(client: httpx.Client, repo: str = "acme/widgets", view: str | None = None, **headers):
    params = {"repo": repo} if view is None else {"repo": repo, "view": view}
    return client.get(PATH, params=params, headers=headers)


def sha(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Basic abc"},
        {"Authorization": "Bearer"},
        {"Authorization": "Bearer nope"},
    ],
)
def test_missing_or_unknown_tokens_get_401(server, headers):
    with httpx.Client(base_url=server.url) as anonymous:
        for response in (
            anonymous.get(PATH, params={"repo": "acme/widgets"}, headers=headers),
            anonymous.put(
                PATH, params={"repo": "acme/widgets"}, json={"entries": {}}, headers=headers
            ),
        ):
            assert response.status_code == 401
            assert response.headers["www-authenticate"].startswith("Bearer")
            assert response.json()["error"]["details"]["error_code"] == "unauthorized"


@pytest.mark.parametrize("repo", ["", "widgets", "a/b/c", "../x", "./x", "a/..", "a b/c", "a/b?c"])
def test_bad_repo_names_get_400(http, repo):
    assert get(http, repo=repo).status_code == 400


def test_empty_repo_is_404_for_both_views(http):
    assert get(http).status_code == 404
    assert get(http, view="hashes").status_code == 404


def test_put_then_get_returns_the_documented_body(http):
    entries = {"MEMORY.md": "- [a](a.md)\n", "a.md": "café\n", "nested/b.txt": "b"}
    response = put(http, entries)
    assert response.status_code == 200
    written = response.json()
    assert written["version"] == 1 and written["checksum"].startswith("sha256:")
    assert response.headers["etag"] == f'"{written["checksum"]}"'

    body = get(http).json()
    assert set(body) == {"organizationId", "repo", "version", "lastModified", "checksum", "content"}
    assert body["organizationId"] == "acme" and body["repo"] == "acme/widgets"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", body["lastModified"])
    assert body["content"]["entries"] == entries
    assert body["content"]["entryChecksums"] == {k: sha(v) for k, v in entries.items()}
    assert body["checksum"] == repo_checksum(body["content"]["entryChecksums"])
    assert body["checksum"] == written["checksum"]


def test_hashes_view_has_only_checksum_version_and_entry_checksums(http):
    put(http, {"a.md": "A"})
    body = get(http, view="hashes").json()
    assert body == {
        "checksum": repo_checksum({"a.md": sha("A")}),
        "version": 1,
        "entryChecksums": {"a.md": sha("A")},
    }


def test_upsert_keeps_unsent_keys_and_identical_puts_change_nothing(http):
    put(http, {"a.md": "A", "b.md": "B"})
    second = put(http, {"b.md": "B2"}).json()
    assert second["version"] == 2
    assert get(http).json()["content"]["entries"] == {"a.md": "A", "b.md": "B2"}
    same = put(http, {"a.md": "A"}).json()
    assert same["version"] == 2 and same["checksum"] == second["checksum"]


def test_checksum_depends_only_on_content_not_on_order(http):
    put(http, {"a.md": "A"}, repo="acme/one")
    put(http, {"b.md": "B"}, repo="acme/one")
    put(http, {"b.md": "B", "a.md": "A"}, repo="acme/two")
    one, two = get(http, repo="acme/one").json(), get(http, repo="acme/two").json()
    assert one["checksum"] == two["checksum"]
    assert one["version"] == 2 and two["version"] == 1


def test_if_none_match(http):
    checksum = put(http, {"a.md": "A"}).json()["checksum"]
    fresh = get(http, **{"If-None-Match": f'"{checksum}"'})
    assert fresh.status_code == 304 and fresh.headers["etag"] == f'"{checksum}"'
    assert get(http, **{"If-None-Match": f'W/"{checksum}", "other"'}).status_code == 304
    assert get(http, **{"If-None-Match": '"sha256:old"'}).status_code == 200


def test_if_match_guards_every_put(http):
    base = put(http, {"a.md": "A"}).json()["checksum"]
    moved = put(http, {"a.md": "A2"}, **{"If-Match": f'"{base}"'})
    assert moved.status_code == 200
    stale = put(http, {"a.md": "A3"}, **{"If-Match": f'"{base}"'})
    assert stale.status_code == 412
    assert get(http).json()["content"]["entries"] == {"a.md": "A2"}
    assert (
        put(http, {"x.md": "x"}, repo="acme/empty", **{"If-Match": '"sha256:any"'}).status_code
        == 412
    )


def test_too_many_entries_is_the_structured_413(http):
    put(http, {f"{i}.md": str(i) for i in range(4)})
    response = put(http, {"4.md": "4", "5.md": "5"})
    assert response.status_code == 413
    assert response.json()["error"]["details"] == {
        "error_code": "team_memory_too_many_entries",
        "max_entries": 5,
        "received_entries": 6,
    }
    assert len(get(http).json()["content"]["entries"]) == 4, "a refused PUT changes nothing"
    assert put(http, {"0.md": "zero", "4.md": "4"}).status_code == 200, "updates still fit"


def test_bodies_over_the_size_limit_get_a_plain_413(http):
    response = put(http, {"big.md": "x" * 5_000})
    assert response.status_code == 413
    assert "team_memory_too_many_entries" not in response.text
    chunked = http.put(
        PATH,
        params={"repo": "acme/widgets"},
        content=iter([b'{"entries":{"big.md":"', b"y" * 5_000, b'"}}']),
    )
    assert chunked.status_code == 413
    assert get(http).status_code == 404


@pytest.mark.parametrize(
    "key",
    [
        "../escape.md",
        "a/../../escape.md",
        "%2e%2e%2fescape.md",
        "\uff0e\uff0e\uff0fescape.md",
        "..\\escape.md",
        "/abs.md",
        "nul\x00.md",
        "",
        "..",
        "dir/",
    ],
)
def test_unsafe_keys_are_refused_and_nothing_is_stored(http, key):
    response = put(http, {"good.md": "fine", key: "bad"})
    assert response.status_code == 400
    assert response.json()["error"]["details"]["error_code"] == "invalid_entry_key"
    assert get(http).status_code == 404


@pytest.mark.parametrize(
    ("content", "error_code"),
    [
        # JSON escapes for lone surrogates: they decode, but no UTF-8 store (or file system)
        # can hold them, so the server refuses them instead of failing with a 500.
        (b'{"entries": {"good.md": "fine", "bad\\ud800.md": "x"}}', "invalid_entry_key"),
        (b'{"entries": {"bad\\udcff.md": "x"}}', "invalid_entry_key"),
        (b'{"entries": {"good.md": "half a pair \\ud800"}}', "invalid_body"),
        (b'{"entries": {"' + b"n" * 256 + b'.md": "x"}}', "invalid_entry_key"),
    ],
    ids=["surrogate-key", "escaped-byte-key", "surrogate-value", "name-over-255-bytes"],
)
def test_keys_and_values_no_client_could_store_get_400(http, content, error_code):
    response = http.put(PATH, params={"repo": "acme/widgets"}, content=content)
    assert response.status_code == 400
    assert response.json()["error"]["details"]["error_code"] == error_code
    assert get(http).status_code == 404


@pytest.mark.parametrize(
    "content",
    [b"not json", b"[]", b'{"entries": []}', b'{"entries": {"a.md": 1}}', b"\xff\xfe"],
)
def test_malformed_put_bodies_get_400(http, content):
    response = http.put(PATH, params={"repo": "acme/widgets"}, content=content)
    assert response.status_code == 400


def test_repos_and_organizations_are_isolated(server, http):
    put(http, {"a.md": "acme widgets"})
    put(http, {"a.md": "acme gadgets"}, repo="acme/gadgets")
    assert get(http).json()["content"]["entries"] == {"a.md": "acme widgets"}
    with httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {OTHER_ORG_TOKEN}"}
    ) as rival:
        assert get(rival).status_code == 404
        put(rival, {"a.md": "rival"})
        assert get(rival).json()["organizationId"] == "rival"
    assert get(http).json()["content"]["entries"] == {"a.md": "acme widgets"}


def test_concurrent_puts_on_one_base_let_exactly_one_win(server, http):
    base = put(http, {"seed.md": "0"}).json()["checksum"]
    codes: list[int] = []
    barrier = threading.Barrier(10)

    def writer(i: int) -> None:
        with httpx.Client(base_url=server.url, headers=http.headers) as own:
            barrier.wait()
            codes.append(
                put(own, {"seed.md": f"writer {i}"}, **{"If-Match": f'"{base}"'}).status_code
            )

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(codes) == [200] + [412] * 9


def test_concurrent_read_modify_write_loses_no_update(team_db):
    # Two server instances on one database: the lock is the database's, not a Python one.
    db = team_db("shared")
    with (
        TeamServer(db, [TOKEN], max_entries=500) as one,
        TeamServer(db, [TOKEN], max_entries=500) as two,
    ):
        headers = {"Authorization": f"Bearer {TOKEN}"}

        def writer(i: int) -> None:
            url = (one if i % 2 else two).url
            with httpx.Client(base_url=url, headers=headers) as own:
                for n in range(5):
                    key = f"w{i}-{n}.md"
                    while True:
                        current = get(own)
                        etag = current.headers.get("etag")
                        extra = {"If-Match": etag} if etag else {}
                        if put(own, {key: "x"}, **extra).status_code == 200:
                            break

        threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        with httpx.Client(base_url=one.url, headers=headers) as check:
            body = get(check).json()
    assert len(body["content"]["entries"]) == 40
    assert body["version"] == 40, "every applied PUT bumped the version exactly once"


def test_token_specs_map_to_organizations():
    assert parse_token_specs(["plain", "acme=tok", "ends-with=", "x=y=z"]) == {
        "plain": "default",
        "tok": "acme",
        "ends-with=": "default",
        "y=z": "x",
    }
