"""Bounded HTTP for team sync: an overall deadline per request and a size cap while reading.

httpx's timeouts bound each read, not the request, so a server that sends one byte every few
seconds would never time out; and `response.content` holds however much the server sends. Here
every request runs under one deadline (connect, send, headers and the whole body), and the body
is read in chunks and refused as soon as it passes its cap, before it is all in memory.

Caps, chosen to fit the protocol (spec 03 §6): a full pull carries every entry, each at most
250,000 bytes; 64 MiB holds 256 entries at that maximum, or the server's default 2,000 entries
at 32 KB each, far beyond a real team memory, while keeping a hostile body to a bounded cost. A
hashes view holds only keys and 71-character hashes (8 MiB is over 7,000 keys of the longest
kind the server accepts), a PUT answer a checksum and the batch's keys (a batch is under
200,000 bytes: 1 MiB). Error bodies are only ever read for a structured 413, so at most 64 KiB
of one is kept and the rest is not read.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

MiB = 1024 * 1024
MAX_PULL_RESPONSE_BYTES = 64 * MiB
MAX_HASHES_RESPONSE_BYTES = 8 * MiB
MAX_PUT_RESPONSE_BYTES = 1 * MiB
MAX_ERROR_BODY_BYTES = 64 * 1024


@dataclass(frozen=True)
class Reply:
    """A response read within its deadline and cap."""

    status_code: int
    headers: Mapping[str, str]
    content: bytes | bytearray
    """The body (for an error status, at most MAX_ERROR_BODY_BYTES of it)."""


class DeadlineExceeded(Exception):
    """The whole request took longer than its deadline."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"no complete answer within {seconds:g} s")
        self.seconds = seconds


class ResponseTooLarge(Exception):
    """A 200 body passed its cap (declared or while streaming)."""

    def __init__(self, limit: int, status: int) -> None:
        super().__init__(f"response body over {limit} bytes")
        self.limit = limit
        self.status = status


def megabytes(limit: int) -> str:
    """`limit` in MiB for messages: `64 MB`, or `0.5 MB` for small test caps."""
    return f"{limit / MiB:.3g} MB"


async def bounded_request(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    deadline: float,
    max_bytes: int,
    **options: Any,
) -> Reply:
    """Send one request and read its answer, all within `deadline` seconds.

    Raises DeadlineExceeded, ResponseTooLarge, or httpx's own errors.
    """
    try:
        async with asyncio.timeout(deadline):
            async with client.stream(method, url, **options) as response:
                return await _read(response, max_bytes)
    except TimeoutError:
        raise DeadlineExceeded(deadline) from None


async def _read(response: httpx.Response, max_bytes: int) -> Reply:
    status = response.status_code
    ok = status == 200
    limit = max_bytes if ok else MAX_ERROR_BODY_BYTES
    declared = response.headers.get("content-length", "")
    if ok and declared.isdigit() and int(declared) > limit:
        raise ResponseTooLarge(limit, status)
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > limit:
            if ok:
                raise ResponseTooLarge(limit, status)
            del body[limit:]  # enough of an error body; the rest is not worth reading
            break
    return Reply(status, response.headers, body)
