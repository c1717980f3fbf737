"""Bounded HTTP for team sync: an overall deadline per request and a size cap while reading.

httpx's timeouts bound each read, not the request, so a server that sends one byte every few
seconds would never time out; and `response.content` holds however much the server sends. Here
every request runs under one deadline (connect, send, headers and the whole body), and the body
is read in chunks and refused as soon as it passes its cap, before it is all in memory.

Compressed bodies are inflated here too, never more than the cap allows, so a small gzip body
that inflates to gigabytes costs no more than a plain one (httpx would inflate each 64 KiB
read whole, to about 64 MB). Only gzip and deflate are asked for and read.

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
import zlib
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
ACCEPT_ENCODING = "gzip, deflate"


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


class BadEncoding(Exception):
    """A body in an encoding this client does not read, or that does not decode."""


class _Identity:
    def feed(self, data: bytes, room: int) -> bytes:
        return data


class _Inflate:
    """gzip or zlib-wrapped deflate, inflated at most `room` bytes at a time."""

    def __init__(self) -> None:
        self._z = zlib.decompressobj(zlib.MAX_WBITS | 32)  # either header, detected

    def feed(self, data: bytes, room: int) -> bytearray:
        out = bytearray()
        pending = data
        try:
            while pending and len(out) < room:
                out += self._z.decompress(pending, room - len(out))
                pending = self._z.unconsumed_tail
        except zlib.error as exc:
            raise BadEncoding(f"the compressed body is corrupt ({exc})") from None
        return out


def _decoder(encoding: str) -> _Identity | _Inflate:
    name = encoding.strip().lower()
    if name in ("", "identity"):
        return _Identity()
    if name in ("gzip", "x-gzip", "deflate"):
        return _Inflate()
    raise BadEncoding(f"it is in an encoding this client does not read ({name[:40]})")


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

    Raises DeadlineExceeded, ResponseTooLarge, BadEncoding, or httpx's own errors.
    """
    headers = {"Accept-Encoding": ACCEPT_ENCODING, **(options.pop("headers", None) or {})}
    try:
        async with asyncio.timeout(deadline):
            async with client.stream(method, url, headers=headers, **options) as response:
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
    if response.is_stream_consumed:
        # Built whole by a mock transport (already in memory, already decoded).
        body += response.content[: limit + 1]
        if ok and len(body) > limit:
            raise ResponseTooLarge(limit, status)
        return Reply(status, response.headers, body[:limit])
    try:
        decoder = _decoder(response.headers.get("content-encoding", ""))
        async for raw in response.aiter_raw():
            body += decoder.feed(raw, limit + 1 - len(body))
            if len(body) > limit:
                if ok:
                    raise ResponseTooLarge(limit, status)
                del body[limit:]  # enough of an error body; the rest is not worth reading
                break
    except BadEncoding:
        if ok:
            raise
        body.clear()  # the status says what went wrong; an unreadable error body adds nothing
    return Reply(status, response.headers, body)
