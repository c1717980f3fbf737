"""The team-memory wire protocol's fixed parts (spec 03 §6): limits, hashes, batching, bodies.

Pure functions only, so every rule here is tested without a network.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from workbench.engine.wording import plural

ENDPOINT_PATH = "/api/claude_code/team_memory"
MAX_FILE_SIZE_BYTES = 250_000
MAX_PUT_BODY_BYTES = 200_000
EMPTY_BODY_BYTES = len('{"entries":{}}')
MAX_RETRIES = 3
MAX_CONFLICT_RETRIES = 2
DEBOUNCE_SECONDS = 2.0
REQUEST_TIMEOUT_SECONDS = 30.0
BASE_RETRY_DELAY_MS = 500
MAX_RETRY_DELAY_MS = 32_000
TOO_MANY_ENTRIES = "team_memory_too_many_entries"


def entry_hash(content: str) -> str:
    """`sha256:<lowercase hex>` of the UTF-8 content."""
    return "sha256:" + hashlib.sha256(content.encode("utf-8")).hexdigest()


def js_sort_key(key: str) -> bytes:
    """Sort key matching JS `Array.prototype.sort()` on strings (UTF-16 code units)."""
    return key.encode("utf-16-be", "surrogatepass")


def retry_delay(attempt: int, rand: Callable[[], float] = random.random) -> float:
    """Seconds to wait before retry `attempt` (1-based): exponential, capped, +≤25% jitter."""
    base = min(BASE_RETRY_DELAY_MS * 2 ** (attempt - 1), MAX_RETRY_DELAY_MS)
    return (base + rand() * 0.25 * base) / 1000


def _json_utf8_len(value: str) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8"))


def batch_delta_by_bytes(delta: Mapping[str, str]) -> list[dict[str, str]]:
    """Greedy batches whose PUT bodies stay under MAX_PUT_BODY_BYTES (spec 03 §6.4).

    Keys go in sorted order; each entry costs its JSON key and value plus 2 bytes (`:` and
    `,`) on top of the 14-byte empty body. An entry too big for any batch travels alone.
    """
    batches: list[dict[str, str]] = []
    current: dict[str, str] = {}
    size = EMPTY_BODY_BYTES
    for key in sorted(delta, key=js_sort_key):
        added = _json_utf8_len(key) + _json_utf8_len(delta[key]) + 2
        if current and size + added > MAX_PUT_BODY_BYTES:
            batches.append(current)
            current, size = {}, EMPTY_BODY_BYTES
        current[key] = delta[key]
        size += added
    if current:
        batches.append(current)
    return batches


def put_body(entries: Mapping[str, str]) -> bytes:
    """The PUT request body, compact JSON in UTF-8."""
    return json.dumps({"entries": dict(entries)}, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8"
    )


def quoted_etag(checksum: str) -> str:
    """The header form: any `"` removed, then wrapped in quotes."""
    return '"' + checksum.replace('"', "") + '"'


def etag_from_header(value: str | None) -> str | None:
    """An `ETag` header's value with its surrounding quotes stripped (None if unusable)."""
    if not value:
        return None
    tag = value.strip()
    if tag.startswith("W/"):
        tag = tag[2:]
    return usable_checksum(tag.strip('"'))


# What may travel back in If-Match / If-None-Match: visible ASCII, bounded, more than quotes
# (which `quoted_etag` drops). Anything else from a server is not kept, or every later request
# would carry a header that cannot be sent, and fail the same way forever.
_USABLE_CHECKSUM = re.compile(r"[!-~]{1,256}")


def usable_checksum(value: object) -> str | None:
    """`value` when it can be sent back as an ETag, else None."""
    if isinstance(value, str) and _USABLE_CHECKSUM.fullmatch(value) and value.strip('"'):
        return value
    return None


# --- bodies -------------------------------------------------------------------------------


class BodyError(ValueError):
    """A response body that does not have the protocol's shape."""


@dataclass(frozen=True)
class TeamMemoryData:
    """A validated GET 200 body."""

    organization_id: str
    repo: str
    version: float
    last_modified: str
    checksum: str
    entries: dict[str, str]
    entry_checksums: dict[str, str] | None


@dataclass(frozen=True)
class TeamMemoryHashes:
    """A validated `?view=hashes` body."""

    checksum: str | None
    version: float | None
    entry_checksums: dict[str, str]


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _str_record(value: Any, what: str) -> dict[str, str]:
    if not isinstance(value, dict):
        raise BodyError(f"{what} is not an object")
    bad = sum(1 for item in value.values() if not isinstance(item, str))
    if bad:
        # The key is not named: it is the server's text, and could be anything.
        raise BodyError(f"{what} has {plural(bad, 'non-string value')}")
    return dict(value)


def parse_json(raw: bytes | bytearray) -> Any:
    """JSON from a response body, as BodyError when it is not JSON."""
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BodyError("the response is not JSON") from exc
    except RecursionError:
        raise BodyError("the response nests too deeply") from None


def parse_team_memory(raw: bytes | bytearray) -> TeamMemoryData:
    """Validate a GET 200 body the way Claude Code's schema does."""
    data = parse_json(raw)
    if not isinstance(data, dict):
        raise BodyError("the response is not a JSON object")
    for name in ("organizationId", "repo", "lastModified", "checksum"):
        if not isinstance(data.get(name), str):
            raise BodyError(f"{name} is missing or not a string")
    if not _is_number(data.get("version")):
        raise BodyError("version is missing or not a number")
    content = data.get("content")
    if not isinstance(content, dict):
        raise BodyError("content is missing or not an object")
    entries = _str_record(content.get("entries"), "content.entries")
    checksums_raw = content.get("entryChecksums")
    checksums = None if checksums_raw is None else _str_record(checksums_raw, "entryChecksums")
    return TeamMemoryData(
        data["organizationId"],
        data["repo"],
        data["version"],
        data["lastModified"],
        data["checksum"],
        entries,
        checksums,
    )


def parse_hashes(raw: bytes | bytearray) -> TeamMemoryHashes:
    """Validate a `?view=hashes` body; it must carry entryChecksums."""
    data = parse_json(raw)
    if not isinstance(data, dict):
        raise BodyError("the response is not a JSON object")
    if "entryChecksums" not in data:
        raise BodyError("entryChecksums is missing")
    checksums = _str_record(data["entryChecksums"], "entryChecksums")
    checksum = data.get("checksum")
    version = data.get("version")
    return TeamMemoryHashes(
        checksum if isinstance(checksum, str) else None,
        version if _is_number(version) else None,
        checksums,
    )


def parse_too_many_entries(raw: bytes | bytearray) -> int | None:
    """`max_entries` from the structured 413 body, or None for any other 413."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    error = data.get("error") if isinstance(data, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    if not isinstance(details, dict) or details.get("error_code") != TOO_MANY_ENTRIES:
        return None
    max_entries = details.get("max_entries")
    received = details.get("received_entries")
    valid = all(
        isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in (max_entries, received)
    )
    return max_entries if valid else None
