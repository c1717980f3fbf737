"""Related words and phrases (the thesaurus): a phrase matches only where its words stand
together, and every reason quotes what the memory itself says."""

from __future__ import annotations

from workbench.engine.recall.ranker import OfflineRanker, RankDocument


def _doc(key: str, description: str, body: str = "") -> RankDocument:
    return RankDocument(key=key, name="", description=description, type=None, body=body)


def test_half_a_related_phrase_is_no_match():
    ranker = OfflineRanker(
        [
            _doc("three_times.md", "Webhooks are sent at most three times"),
            _doc("long_time.md", "Long-time user; shows timestamps in local time"),
            _doc("calls.md", "Call the customer before any refund"),
        ]
    )
    # 'times out' (related to retry) is not 'times'; 'on-call' (related to alert) is not 'call'.
    assert [r.key for r in ranker.rank("retry")] == []
    assert [r.key for r in ranker.rank("incident alert")] == []


def test_a_whole_phrase_matches_and_is_quoted_as_written():
    ranker = OfflineRanker(
        [
            _doc("upload.md", "The nightly upload Timed\n  out twice last week"),
            _doc("rota.md", "Weekly On-Call rotation"),
            _doc("other.md", "Unrelated notes about colours"),
        ]
    )
    (hit,) = ranker.rank("retry")
    assert hit.key == "upload.md"
    assert hit.related == {"description": (("timed out", "retry"),)}
    (hit,) = ranker.rank("incident")
    assert hit.related == {"description": (("on-call", "incident"),)}


def test_a_related_word_is_quoted_as_the_memory_writes_it():
    (hit,) = OfflineRanker([_doc("t.md", "Raise the client timeouts")]).rank("retry")
    assert hit.related == {"description": (("timeouts", "retry"),)}


def test_a_phrase_in_the_query_finds_its_related_words():
    ranker = OfflineRanker([_doc("retries.md", "Retries use exponential backoff")])
    (hit,) = ranker.rank("the webhook times out")
    assert dict(hit.related["description"]) == {
        "retries": "times out",
        "backoff": "times out",
    }


def test_offline_reasons_quote_only_what_the_file_holds(memory_folder):
    memory_folder.add(
        "user_timezone.md",
        "Long-time user in Lisbon; logs use UTC timestamps",
        type="user",
        name="time zone",
    )
    memory_folder.add(
        "feedback_retries.md",
        "Retry a failed charge at most three times",
        type="feedback",
        body="If the provider times out, retry with the same idempotency key.",
    )
    result = memory_folder.engine().recall.recall_offline("when should we retry payments")
    texts = [r for s in result.selected for r in s.reasons]
    texts += [m.why_not or "" for m in result.near_misses]
    assert "user_timezone.md" not in {s.path for s in result.selected}
    assert "user_timezone.md" not in {m.path for m in result.near_misses}
    (pick,) = result.selected
    assert pick.path == "feedback_retries.md"
    assert any(
        "body (first 1,500 characters) matches 'retry' and has 'idempotency', 'times out' "
        "(related to 'retry')" in r
        for r in pick.reasons
    ), pick.reasons
    assert not any("description" in r and "times out" in r for r in texts)
