"""The team-memory sync client: pull (server wins per key) and push (local wins), spec 03 §6.

Network calls are async over `httpx.AsyncClient`; the transport is injectable so tests can play
a hostile or failing server. Every request has an overall deadline and a response-size cap
(`sync_transport`), and a pull as a whole, retries included, has a deadline of its own. Pulled
keys are checked before anything is written: one that cannot be a file name, leaves the team
folder or holds a secret is refused on its own and reported, and the rest still applies. Disk
work (reading the team folder, writing pulled entries) runs in worker threads. Pulled
overwrites go through the engine's history, so each pull can be undone. State (checksums,
learned limits, suppression, history) is saved after every operation.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from workbench import __version__
from workbench.engine.errors import OperationCancelled, PathTraversalError
from workbench.engine.jsutil import now_iso
from workbench.engine.progress import ProgressCallback, Reporter
from workbench.engine.team.sync.keys import (
    display_key,
    file_name_problem,
    redacted_key,
    secrets_in_keys,
    unicode_problem,
)
from workbench.engine.team.sync.local import Scanner, default_scanner, read_local_entries
from workbench.engine.team.sync.models import (
    KeyState,
    LocalSnapshot,
    Overwrite,
    PullResult,
    PushResult,
    ReplacedLocal,
    SkippedKey,
    SyncError,
    SyncStatus,
)
from workbench.engine.team.sync.protocol import (
    ENDPOINT_PATH,
    MAX_CONFLICT_RETRIES,
    MAX_FILE_SIZE_BYTES,
    MAX_RETRIES,
    REQUEST_TIMEOUT_SECONDS,
    BodyError,
    TeamMemoryData,
    TeamMemoryHashes,
    batch_delta_by_bytes,
    entry_hash,
    etag_from_header,
    js_sort_key,
    parse_hashes,
    parse_team_memory,
    parse_too_many_entries,
    put_body,
    quoted_etag,
    retry_delay,
    usable_checksum,
)
from workbench.engine.team.sync.state import SyncState, SyncStateStore
from workbench.engine.team.sync.transport import (
    MAX_HASHES_RESPONSE_BYTES,
    MAX_PULL_RESPONSE_BYTES,
    MAX_PUT_RESPONSE_BYTES,
    BadEncoding,
    DeadlineExceeded,
    Reply,
    ResponseTooLarge,
    bounded_request,
    megabytes,
)
from workbench.engine.userfiles import read_bytes

if TYPE_CHECKING:
    import httpx

    from workbench.engine.history import History

PULL_WRITE_CONCURRENCY = 8
PULL_DEADLINE_FACTOR = 2
"""A pull, retries and back-off included, ends within this many request deadlines."""


@dataclass(frozen=True)
class _Fetch:
    """The outcome of one GET (after retries)."""

    data: TeamMemoryData | None = None
    not_modified: bool = False
    empty: bool = False
    etag: str | None = None
    error: SyncError | None = None
    skip_retry: bool = False


@dataclass(frozen=True)
class _Put:
    """The outcome of one PUT."""

    ok: bool
    checksum: str | None = None
    conflict: bool = False
    max_entries: int | None = None
    error: SyncError | None = None


def classify_transport_error(exc: httpx.HTTPError) -> SyncError:
    """`classifyAxiosError` for requests that got no (usable) response."""
    import httpx

    if isinstance(exc, httpx.TimeoutException):
        return SyncError("timeout", None, "the team server did not answer in time")
    if isinstance(exc, httpx.ConnectError):
        return SyncError("network", None, f"cannot reach the team server ({_short(exc)})")
    if isinstance(exc, httpx.DecodingError):
        return SyncError("http", None, "the team server sent a body that cannot be decoded")
    return SyncError("http", None, f"the connection to the team server failed ({_short(exc)})")


def classify_status(status: int, what: str) -> SyncError:
    """`classifyAxiosError` for an HTTP error status."""
    if status in (401, 403):
        return SyncError(
            "auth", status, f"the team server refused the token (HTTP {status}) on {what}"
        )
    return SyncError("http", status, f"the team server answered HTTP {status} to {what}")


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or exc.__class__.__name__
    return text if len(text) <= 160 else text[:157] + "..."


def is_permanent_failure(error: SyncError | None) -> bool:
    """`isPermanentFailure`: missing token or repo, or any 4xx except 409 and 429."""
    if error is None:
        return False
    if error.kind in ("no_token", "no_repo"):
        return True
    status = error.http_status
    return status is not None and 400 <= status < 500 and status not in (409, 429)


class TeamSyncClient:
    """Pull, push and status for one team folder against one server and repo."""

    def __init__(
        self,
        *,
        server: str,
        repo: str,
        token: str,
        team_dir: str,
        history: History | None = None,
        state_store: SyncStateStore | None = None,
        state: SyncState | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = REQUEST_TIMEOUT_SECONDS,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        rand: Callable[[], float] = random.random,
        scanner: Scanner | None = None,
        max_response_bytes: int = MAX_PULL_RESPONSE_BYTES,
    ) -> None:
        """`timeout` is each request's overall deadline in seconds (a pull's, retries
        included, is PULL_DEADLINE_FACTOR times it); `max_response_bytes` caps a pull's body
        (the smaller answers have smaller caps of their own, never above it)."""
        self.server = server.rstrip("/")
        self.repo = repo
        self.team_dir = team_dir if team_dir.endswith(os.sep) else team_dir + os.sep
        self.history = history
        self.state_store = state_store if state_store is not None else SyncStateStore()
        if state is None:
            state = self.state_store.load(self.server, repo, self.team_dir)
        self.state = state
        self._token = token
        self._transport = transport
        self._timeout = timeout
        self._sleep = sleep
        self._rand = rand
        self._scanner = scanner
        self._max_bytes = max_response_bytes
        self._http: httpx.AsyncClient | None = None

    # --- lifecycle --------------------------------------------------------------------

    def _client(self) -> httpx.AsyncClient:
        # Imported on first use: importing httpx also loads its Rich-based CLI, which the
        # engine must not pull in at import time.
        import httpx

        if self._http is None:
            self._http = httpx.AsyncClient(
                transport=self._transport,
                timeout=self._timeout,
                headers={
                    "Authorization": f"Bearer {self._token}",
                    "anthropic-beta": "oauth-2025-04-20",
                    "User-Agent": f"memory-workbench/{__version__}",
                },
                follow_redirects=False,
            )
        return self._http

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def __aenter__(self) -> TeamSyncClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    @property
    def url(self) -> str:
        return self.server + ENDPOINT_PATH

    def save_state(self) -> None:
        """Persist the state now."""
        self.state_store.save(self.state)

    def _scan(self, text: str) -> Any:
        return (self._scanner or default_scanner())(text)

    # --- one bounded request ------------------------------------------------------------

    async def _send(
        self,
        method: str,
        what: str,
        max_bytes: int,
        *,
        deadline: float | None = None,
        **options: Any,
    ) -> Reply | SyncError:
        """One request within its deadline and size cap; failures as a SyncError."""
        import httpx

        seconds = self._timeout if deadline is None else deadline
        limit = min(max_bytes, self._max_bytes)
        try:
            return await bounded_request(
                self._client(), method, self.url, deadline=seconds, max_bytes=limit, **options
            )
        except DeadlineExceeded:
            message = f"the team server did not finish answering {what} within {seconds:.3g} s"
            return SyncError("timeout", None, message)
        except ResponseTooLarge as exc:
            message = (
                f"the team server's answer to {what} is larger than the {megabytes(exc.limit)} "
                "this client accepts; refused"
            )
            return SyncError("too_large", exc.status, message)
        except BadEncoding as exc:
            return SyncError(
                "http", None, f"the team server's answer to {what} is unreadable: {exc}"
            )
        except httpx.HTTPError as exc:
            return classify_transport_error(exc)

    # --- GET --------------------------------------------------------------------------

    async def _get_once(self, etag: str | None, deadline: float) -> _Fetch:
        usable = usable_checksum(etag)
        headers = {"If-None-Match": quoted_etag(usable)} if usable else {}
        response = await self._send(
            "GET",
            "the pull",
            MAX_PULL_RESPONSE_BYTES,
            deadline=deadline,
            params={"repo": self.repo},
            headers=headers,
        )
        if isinstance(response, SyncError):
            # Too large says the same thing again on a retry; the others may pass.
            return _Fetch(error=response, skip_retry=response.kind == "too_large")
        if response.status_code == 304:
            return _Fetch(not_modified=True)
        if response.status_code == 404:
            return _Fetch(empty=True)
        if response.status_code != 200:
            error = classify_status(response.status_code, "the pull")
            return _Fetch(error=error, skip_retry=error.kind == "auth")
        try:
            data = parse_team_memory(response.content)
        except BodyError as exc:
            # A body that fails validation is not retried: the server would say it again.
            return _Fetch(
                error=SyncError("parse", 200, f"malformed pull response: {exc}"), skip_retry=True
            )
        return _Fetch(data=data, etag=etag_from_header(response.headers.get("etag")))

    async def _get_with_retries(self, etag: str | None) -> _Fetch:
        attempt = 0
        stop_at = time.monotonic() + PULL_DEADLINE_FACTOR * self._timeout
        while True:
            remaining = max(stop_at - time.monotonic(), 0.001)
            outcome = await self._get_once(etag, min(self._timeout, remaining))
            if outcome.error is None or outcome.skip_retry or attempt >= MAX_RETRIES:
                return self._attempts_said(outcome, attempt + 1)
            attempt += 1
            delay = retry_delay(attempt, self._rand)
            if time.monotonic() + delay >= stop_at:
                return self._attempts_said(outcome, attempt)  # no time left for another
            await self._sleep(delay)

    def _attempts_said(self, outcome: _Fetch, attempts: int) -> _Fetch:
        # The last attempt may have had only what was left of the pull's deadline: name the
        # request deadline and the attempts, not that remainder.
        error = outcome.error
        if error is None or error.kind != "timeout" or attempts < 2:
            return outcome
        message = (
            f"the team server did not finish answering the pull within {self._timeout:g} s "
            f"({attempts} attempts)"
        )
        return replace(outcome, error=SyncError("timeout", None, message))

    async def fetch_hashes(self) -> TeamMemoryHashes | SyncError:
        """The server's per-key hashes (`?view=hashes`); 404 reads as an empty repo."""
        response = await self._send(
            "GET",
            "the hashes probe",
            MAX_HASHES_RESPONSE_BYTES,
            params={"repo": self.repo, "view": "hashes"},
        )
        if isinstance(response, SyncError):
            return response
        if response.status_code == 404:
            return TeamMemoryHashes(None, None, {})
        if response.status_code != 200:
            return classify_status(response.status_code, "the hashes probe")
        try:
            return parse_hashes(response.content)
        except BodyError as exc:
            return SyncError("parse", 200, f"malformed hashes response: {exc}")

    # --- pull -------------------------------------------------------------------------

    async def pull(
        self, *, skip_etag_cache: bool = False, on_progress: ProgressCallback | None = None
    ) -> PullResult:
        """Fetch the team memory and write changed entries into the team folder.

        `on_progress` hears the download start, then each entry as it is written; raising
        `OperationCancelled` from it stops the pull before the next file (each file is
        written whole, through history, or not at all; the state is not saved, so the next
        pull fetches again and finds the written files unchanged).
        """
        etag = None if skip_etag_cache else self.state.last_known_checksum
        if etag is not None and self.state.server_checksums:
            local = await asyncio.to_thread(self.read_local)
            if not set(self.state.server_checksums) <= local.all_keys:
                # A file the server holds is missing here (deleted here, or a teammate's
                # that a push's checksum covers but no pull brought): a 304 would leave it
                # missing, so fetch in full (spec 03 §6.5: the next pull restores it).
                etag = None
        Reporter(on_progress, "pulling", None, unit="entries")(0, "(downloading)", force=True)
        fetched = await self._get_with_retries(etag)
        if fetched.error is not None:
            result = PullResult(
                "error", checksum=self.state.last_known_checksum, error=fetched.error
            )
        elif fetched.not_modified:
            result = PullResult("not_modified", checksum=self.state.last_known_checksum)
        elif fetched.empty:
            self.state.last_known_checksum = None
            self.state.server_checksums.clear()
            result = PullResult("empty")
        else:
            assert fetched.data is not None
            data = fetched.data
            self.state.server_checksums = self._keepable(data.entry_checksums or {})
            self.state.last_known_checksum = usable_checksum(data.checksum) or fetched.etag
            written, unchanged, skipped, replaced = await self._write_entries(
                data.entries, on_progress
            )
            result = PullResult(
                "ok",
                written=tuple(written),
                unchanged=unchanged,
                skipped=tuple(skipped),
                checksum=self.state.last_known_checksum,
                replaced_local=tuple(replaced),
            )
        self._record("pull", result.status, result.error, written=len(result.written))
        self.save_state()
        return result

    def _keepable(self, checksums: Mapping[str, str]) -> dict[str, str]:
        """The server's hashes for keys a local file could have; the rest (keys refused on
        pull, which no push can send either) are not kept, so state never holds them."""
        named = secrets_in_keys(checksums, self._scan)
        return {
            key: value
            for key, value in checksums.items()
            if file_name_problem(key) is None and key not in named
        }

    async def _write_entries(
        self, entries: Mapping[str, str], on_progress: ProgressCallback | None = None
    ) -> tuple[list[str], int, list[SkippedKey], list[ReplacedLocal]]:
        group = self.history.new_group() if self.history is not None else ""
        limit = asyncio.Semaphore(PULL_WRITE_CONCURRENCY)
        named = await asyncio.to_thread(secrets_in_keys, entries, self._scan)
        report = Reporter(on_progress, "pulling", len(entries), unit="entries")
        cancelled: list[OperationCancelled] = []
        done = 0
        report(0, force=True)

        async def write(key: str, content: str) -> tuple[str, str, SkippedKey | None]:
            nonlocal done
            async with limit:
                if cancelled:
                    return key, "cancelled", None  # never started: nothing of it on disk
                outcome = await asyncio.to_thread(
                    self._write_one, key, content, group, named.get(key)
                )
                done += 1
                try:
                    report(done, display_key(key))
                except OperationCancelled as exc:
                    cancelled.append(exc)  # the writes in flight finish; no new one starts
                return outcome

        outcomes = await asyncio.gather(*(write(k, v) for k, v in entries.items()))
        if cancelled:
            raise cancelled[0]
        report.finish(done)
        written: list[str] = []
        skipped: list[SkippedKey] = []
        replaced: list[ReplacedLocal] = []
        unchanged = 0
        for key, what, skip in outcomes:
            if skip is not None:
                skipped.append(skip)
                continue
            self.state.last_synced[key] = entry_hash(_well_formed(entries[key]))
            if what == "unchanged":
                unchanged += 1
                continue
            written.append(key)
            if what.startswith("replaced"):
                history_id = what.removeprefix("replaced").strip() or None
                replaced.append(ReplacedLocal(display_key(key), history_id))
        written.sort(key=js_sort_key)
        skipped.sort(key=lambda s: js_sort_key(s.key))
        replaced.sort(key=lambda r: js_sort_key(r.key))
        return written, unchanged, skipped, replaced

    def _checked_path(self, key: str, content: str, found: Any) -> Path | SkippedKey:
        """Where a pulled entry may be written, or why it must not be; `found` is the secret
        in its key, if any. That check comes first: past it, a key may be shown (escaped to
        one line)."""
        from workbench.engine.team.pathsafety import validate_team_mem_key

        if found is not None:
            shown = redacted_key(key, self._scan)
            return SkippedKey(shown, "secret_in_key", f"its name holds a {found.label}")
        shown = display_key(key)
        problem = unicode_problem(key)  # before any OS call, which could not encode it
        if problem is not None:
            return SkippedKey(shown, "invalid_key", problem)
        try:
            path = Path(validate_team_mem_key(key, self.team_dir))
        except PathTraversalError as exc:
            return SkippedKey(shown, "unsafe_key", _short(exc))
        except (OSError, ValueError) as exc:  # the OS cannot even look the path up
            return SkippedKey(shown, "invalid_key", _short(exc))
        problem = file_name_problem(key)
        if problem is not None:
            return SkippedKey(shown, "invalid_key", problem)
        in_text = self._scan(content)
        if in_text:
            return SkippedKey(shown, "secret_in_content", f"it holds a {in_text[0].label}")
        return path

    def _write_one(
        self, key: str, content: str, group: str, secret_in_name: Any = None
    ) -> tuple[str, str, SkippedKey | None]:
        path = self._checked_path(key, content, secret_in_name)
        if isinstance(path, SkippedKey):
            return key, "skipped", path
        data = _well_formed(content).encode("utf-8")
        if len(data) > MAX_FILE_SIZE_BYTES:
            return key, "skipped", SkippedKey(display_key(key), "too_large", f"{len(data)} bytes")
        try:
            here: bytes | None = read_bytes(path, MAX_FILE_SIZE_BYTES, "a team file")
        except FileNotFoundError:
            here = None
        except OSError as exc:
            reason = exc.strerror or "unreadable"
            return key, "skipped", SkippedKey(display_key(key), "write_failed", reason)
        if here == data:
            return key, "unchanged", None  # identical: leave the file (and its mtime) alone
        # The server wins, but a change made here since the last sync is said, not lost
        # in silence: the history entry of this write holds it.
        local_change = here is not None and self.state.last_synced.get(key) != entry_hash(
            here.decode("utf-8", "replace")
        )
        try:
            if self.history is not None:
                note = f"pulled from {self.repo}"
                entry = self.history.write(path, data, "sync-pull", note=note, group=group)
                if local_change:
                    return key, f"replaced {entry.id}", None
            else:
                from workbench.engine.atomic import atomic_write_bytes

                atomic_write_bytes(path, data)
        except OSError as exc:
            reason = exc.strerror or _short(exc)
            return key, "skipped", SkippedKey(display_key(key), "write_failed", reason)
        return key, "replaced" if local_change else "written", None

    # --- push -------------------------------------------------------------------------

    def read_local(self) -> LocalSnapshot:
        """The team folder as the next push would read it."""
        return read_local_entries(
            self.team_dir, self.state.server_max_entries, scanner=self._scanner
        )

    async def push(
        self, *, force: bool = False, on_progress: ProgressCallback | None = None
    ) -> PushResult:
        """Upload local entries whose hash differs from the server's (local wins).

        `on_progress` hears how many changed entries were uploaded, before the first batch and
        after each one; raising `OperationCancelled` from it stops between batches (what was
        uploaded is recorded; nothing is sent half)."""
        local = await asyncio.to_thread(self.read_local)
        if self.state.push_suppressed_reason is not None:
            gone = set(self.state.suppressed_keys) - local.all_keys
            if force or gone:
                self.state.lift_suppression()
            else:
                result = PushResult(
                    "suppressed",
                    skipped_secrets=local.skipped_secrets,
                    skipped_too_large=local.skipped_too_large,
                    max_entries=self.state.server_max_entries,
                    suppressed_reason=self.state.push_suppressed_reason,
                )
                self._record("push", "suppressed", None)
                self.save_state()
                return result
        try:
            result = await self._push_loop(local, on_progress)
        except OperationCancelled:
            self.save_state()  # the batches that went through stay known
            raise
        if result.status == "error" and is_permanent_failure(result.error):
            assert result.error is not None
            reason = result.error.kind
            if result.error.http_status is not None:
                reason = f"http_{result.error.http_status}"
            self.state.suppress(reason, sorted(local.all_keys))
            result = replace(result, suppressed_reason=reason)
        self._record(
            "push",
            result.status,
            result.error,
            uploaded=result.uploaded,
            batches=result.batches,
            conflict_retries=result.conflict_retries,
        )
        self.save_state()
        return result

    async def _push_loop(
        self, local: LocalSnapshot, on_progress: ProgressCallback | None = None
    ) -> PushResult:
        uploaded: list[str] = []
        batches_sent = 0
        conflict_retries = 0
        guard = _OverwriteGuard(self)

        def finish(status: str, error: SyncError | None = None) -> PushResult:
            return PushResult(
                status,
                uploaded=len(uploaded),
                uploaded_keys=tuple(uploaded),
                batches=batches_sent,
                conflict_retries=conflict_retries,
                skipped_secrets=local.skipped_secrets,
                skipped_too_large=local.skipped_too_large,
                max_entries=self.state.server_max_entries,
                error=error,
                overwritten=tuple(guard.done),
                skipped_over_limit=local.over_limit,
            )

        if self.state.last_known_checksum is None:
            # Never synced with this server: a PUT without If-Match would replace whatever
            # teammates pushed, unseen. Learn the server's hashes first, so the push is
            # conditional, identical files drop out, and what it replaces is kept and said.
            failed = await self._learn_server_hashes(local, guard)
            if failed is not None:
                return finish("error", failed)
        for attempt in range(MAX_CONFLICT_RETRIES + 1):
            server = self.state.server_checksums
            delta = {
                key: text
                for key, text in local.entries.items()
                if server.get(key) != local.hashes[key]
            }
            if not delta:
                return finish("ok")
            conflict = False
            report = Reporter(on_progress, "pushing", len(delta), unit="entries")
            sent = 0
            report(sent, force=True)
            for batch in batch_delta_by_bytes(delta):
                put = await self._put(batch)
                if put.ok:
                    batches_sent += 1
                    for key in batch:
                        self.state.server_checksums[key] = local.hashes[key]
                        self.state.last_synced[key] = local.hashes[key]
                    uploaded.extend(batch)
                    if put.checksum:
                        self.state.last_known_checksum = put.checksum
                    await guard.replaced(batch, local)
                    sent += len(batch)
                    report(sent, force=True)  # after the state knows this batch
                    continue
                if put.conflict:
                    conflict = True
                    break
                if put.max_entries is not None:
                    self.state.server_max_entries = put.max_entries
                return finish("error", put.error)
            if not conflict:
                return finish("ok")
            exhausted = attempt >= MAX_CONFLICT_RETRIES
            self.state.record_conflict(
                {
                    "time": now_iso(),
                    "attempt": attempt + 1,
                    "pending_keys": sorted(delta, key=js_sort_key)[:50],
                    "pending_count": len(delta),
                    "resolved": False if exhausted else None,
                }
            )
            if exhausted:
                message = (
                    f"the team memory kept changing under this push; gave up after "
                    f"{MAX_CONFLICT_RETRIES} retries"
                )
                return finish("conflict", SyncError("conflict", 412, message))
            failed = await self._learn_server_hashes(local, guard)
            if failed is not None:
                return finish("error", failed)
            conflict_retries += 1
        raise AssertionError("unreachable: the loop returns on its last attempt")

    async def _learn_server_hashes(
        self, local: LocalSnapshot, guard: _OverwriteGuard
    ) -> SyncError | None:
        """Probe the server's hashes: the guard learns which files a push would replace, and
        the state what the server holds and its checksum. The probe's error, if any."""
        probe = await self.fetch_hashes()
        if isinstance(probe, SyncError):
            return probe
        await guard.probed(local, probe.entry_checksums)
        self.state.server_checksums = self._keepable(probe.entry_checksums)
        self.state.last_known_checksum = usable_checksum(probe.checksum)
        return None

    async def _put(self, batch: Mapping[str, str]) -> _Put:
        import json

        headers = {"Content-Type": "application/json"}
        etag = usable_checksum(self.state.last_known_checksum)
        if etag is not None:
            headers["If-Match"] = quoted_etag(etag)
        response = await self._send(
            "PUT",
            "the push",
            MAX_PUT_RESPONSE_BYTES,
            params={"repo": self.repo},
            content=put_body(batch),
            headers=headers,
        )
        if isinstance(response, SyncError):
            kind = response.kind if response.kind in ("timeout", "network") else "unknown"
            return _Put(False, error=SyncError(kind, response.http_status, response.message))
        status = response.status_code
        if status == 200:
            checksum = None
            try:
                body = json.loads(response.content)
                if isinstance(body, dict):
                    checksum = usable_checksum(body.get("checksum"))
            except (ValueError, RecursionError):
                pass
            return _Put(True, checksum=checksum or etag_from_header(response.headers.get("etag")))
        if status == 412:
            return _Put(False, conflict=True)
        error = classify_status(status, "the push")
        if error.kind == "http":
            error = SyncError("unknown", status, error.message)
        if status == 413:
            learned = parse_too_many_entries(response.content)
            if learned is not None:
                message = f"the team server holds at most {learned} entries for this repo"
                return _Put(
                    False, max_entries=learned, error=SyncError("too_many_entries", 413, message)
                )
        return _Put(False, error=error)

    async def sync(self) -> tuple[PullResult, PushResult | None]:
        """Pull (ignoring the ETag cache), then push when the pull succeeded."""
        pulled = await self.pull(skip_etag_cache=True)
        if not pulled.ok:
            return pulled, None
        return pulled, await self.push()

    # --- suppression, status ---------------------------------------------------------

    def lift_suppression(self) -> bool:
        """Allow pushes again (a watched file was deleted); True when one was lifted."""
        if self.state.push_suppressed_reason is None:
            return False
        self.state.lift_suppression()
        self.save_state()
        return True

    def status(self) -> SyncStatus:
        """Local entries against the saved server view, with no network call."""
        return build_status(self.server, self.repo, self.team_dir, self.state, self.read_local())

    # --- history ----------------------------------------------------------------------

    def _record(self, operation: str, status: str, error: SyncError | None, **counts: int) -> None:
        entry: dict[str, Any] = {"time": now_iso(), "operation": operation, "status": status}
        entry.update(counts)
        if error is not None:
            entry["error"] = error.to_json()
        self.state.record(entry)
        if operation == "push" and status == "ok":
            for conflict in self.state.conflicts:
                if conflict.get("resolved") is None:
                    conflict["resolved"] = True


class _OverwriteGuard:
    """Local wins, but never silently: after a 412 the hash probe shows which files a
    teammate changed since we last agreed on them; their versions are fetched once, and when
    the retried PUT replaces one it is recorded (sync state) and kept in local history, so
    undoing that entry brings their version back."""

    def __init__(self, client: TeamSyncClient) -> None:
        self.client = client
        self.at_risk: dict[str, str] = {}
        """Key → the teammate's hash the next PUT would replace."""
        self.theirs: dict[str, bytes] = {}
        self.done: list[Overwrite] = []

    async def probed(self, local: LocalSnapshot, server_hashes: Mapping[str, str]) -> None:
        state = self.client.state
        for key, mine in local.hashes.items():
            theirs = server_hashes.get(key)
            if theirs is None or theirs == mine or theirs == state.last_synced.get(key):
                self.at_risk.pop(key, None)
                continue  # nothing of theirs to lose: absent, identical, or ours is newer
            self.at_risk[key] = theirs
        missing = [key for key in self.at_risk if key not in self.theirs]
        if missing and self.client.history is not None:
            fetched = await self.client._get_once(None, self.client._timeout)
            entries = fetched.data.entries if fetched.data is not None else {}
            for key in missing:
                if key in entries:
                    self.theirs[key] = _well_formed(entries[key]).encode("utf-8")

    async def replaced(self, batch: Mapping[str, str], local: LocalSnapshot) -> None:
        for key in [k for k in batch if k in self.at_risk]:
            server_hash = self.at_risk.pop(key)
            history_id = await asyncio.to_thread(self._keep, key)
            overwrite = Overwrite(key, now_iso(), server_hash, local.hashes[key], history_id)
            self.done.append(overwrite)
            self.client.state.record_overwrite(overwrite.to_json())

    def _keep(self, key: str) -> str | None:
        history, theirs = self.client.history, self.theirs.get(key)
        if history is None or theirs is None:
            return None
        path = Path(self.client.team_dir) / key
        try:
            mine = read_bytes(path, MAX_FILE_SIZE_BYTES, "a team file")
        except OSError:
            return None
        entry = history.record(
            path,
            theirs,
            mine,
            "sync-overwrite",
            note=f"a push replaced the teammate's version on {self.client.repo}; undo restores it",
        )  # no group: each file's version can be restored on its own
        return entry.id


def build_status(
    server: str | None, repo: str, team_dir: str, state: SyncState, local: LocalSnapshot
) -> SyncStatus:
    """Per-key local / server / last-synced state, the pending delta and the rest."""
    blocked = {s.path: "secret_blocked" for s in local.skipped_secrets}
    blocked.update({path: "too_large" for path in local.skipped_too_large})
    keys = set(local.hashes) | set(state.server_checksums) | set(state.last_synced) | set(blocked)
    rows = []
    for key in sorted(keys, key=js_sort_key):
        here = local.hashes.get(key)
        there = state.server_checksums.get(key)
        base = state.last_synced.get(key)
        rows.append(
            KeyState(key, here, there, base, _key_state(here, there, base, blocked.get(key)))
        )
    pending = tuple(
        k
        for k in sorted(local.hashes, key=js_sort_key)
        if state.server_checksums.get(k) != local.hashes[k]
    )
    return SyncStatus(
        server=server,
        repo=repo,
        team_dir=team_dir,
        local_entries=len(local.entries),
        pending=pending,
        keys=tuple(rows),
        skipped_secrets=local.skipped_secrets,
        skipped_too_large=local.skipped_too_large,
        last_checksum=state.last_known_checksum,
        max_entries=state.server_max_entries,
        suppressed_reason=state.push_suppressed_reason,
        conflicts=tuple(state.conflicts),
        history=tuple(reversed(state.history)),
        overwrites=tuple(
            o for o in map(Overwrite.from_json, reversed(state.overwrites)) if o is not None
        ),
    )


def _key_state(here: str | None, there: str | None, base: str | None, blocked: str | None) -> str:
    if blocked is not None:
        return blocked
    if here is not None and there is not None:
        if here == there:
            return "in_sync"
        if base == there:
            return "local_changed"
        if base == here:
            return "server_changed"
        return "both_changed"
    if here is not None:
        return "local_only" if base is None or base == here else "local_changed"
    return "server_only" if base is None else "deleted_locally"


def _well_formed(text: str) -> str:
    """`text` with lone surrogates replaced by U+FFFD, as Node does when writing UTF-8."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
