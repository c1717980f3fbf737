"""Scanning files and folders for secrets, with suppression, as one report for CLI and UI."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from workbench.engine import userfiles
from workbench.engine.errors import NotFoundError
from workbench.engine.progress import ProgressCallback, Reporter
from workbench.engine.team.secrets.fingerprint import fingerprint
from workbench.engine.team.secrets.prefilter import get_prefilter
from workbench.engine.team.secrets.scanner import SecretFinding, find_secrets_many
from workbench.engine.team.secrets.suppression import (
    BY_BASELINE,
    EXCLUSION_REASONS,
    INLINE_REASONS,
    Baseline,
    Exclusions,
    Suppressed,
    SuppressionResult,
    apply_baseline,
    suppress_in_source,
)

# Files are read and prefiltered in batches of about this many bytes (one hyperscan pass each).
BATCH_BYTES = 8 * 1024 * 1024
SKIPPED_FOLDERS = frozenset({".git", ".hg", ".svn", "__pycache__"})


@dataclass(frozen=True)
class UnreadableFile:
    """A file the scan could not read, and why."""

    path: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "reason": self.reason}


@dataclass(frozen=True)
class SecretScanReport:
    """What `scan-secrets` found: reported findings, and those suppressed and why."""

    files_scanned: int
    findings: tuple[SecretFinding, ...]
    suppressed_findings: tuple[Suppressed, ...] = ()
    engine: str = ""
    baseline: str | None = None
    unreadable: tuple[UnreadableFile, ...] = ()
    skipped: tuple[UnreadableFile, ...] = ()
    """Files left unread on purpose (larger than `--max-size`)."""
    files_excluded: int = 0
    abs_paths: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    all_findings: tuple[SecretFinding, ...] = field(default=(), compare=False, repr=False)
    """Reported and suppressed findings together (what a new baseline would list)."""
    in_source: SuppressionResult = field(
        default_factory=lambda: SuppressionResult(()), compare=False, repr=False
    )
    """The findings once markers and exclusions were applied, before the baseline."""
    verdicts: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    """Audit labels the baseline gives reported findings (only `real` keeps one reported)."""

    @property
    def needs_action(self) -> bool:
        """True when a finding is left after suppression (the CLI exits 1)."""
        return bool(self.findings)

    @property
    def suppressed(self) -> int:
        return len(self.suppressed_findings)

    @property
    def suppressed_inline(self) -> int:
        return sum(1 for s in self.suppressed_findings if s.by in INLINE_REASONS)

    @property
    def suppressed_baseline(self) -> int:
        return sum(1 for s in self.suppressed_findings if s.by == BY_BASELINE)

    @property
    def suppressed_excluded(self) -> int:
        return sum(1 for s in self.suppressed_findings if s.by in EXCLUSION_REASONS)

    def with_baseline(self, baseline: Baseline | None) -> SecretScanReport:
        """The same scan judged against another baseline (no file is read again)."""
        after = apply_baseline(self.in_source.kept, baseline)
        verdicts = {}
        if baseline is not None:
            verdicts = {
                f.fingerprint: v for f in after.kept if (v := baseline.verdict(f.fingerprint))
            }
        return replace(
            self,
            findings=after.kept,
            suppressed_findings=self.in_source.suppressed_findings + after.suppressed_findings,
            baseline=baseline.source if baseline is not None else None,
            verdicts=verdicts,
        )

    def finding_json(self, finding: SecretFinding) -> dict[str, object]:
        extra: dict[str, object] = {"abs_path": self.abs_paths.get(finding.path, finding.path)}
        if finding.fingerprint in self.verdicts:
            extra["baseline_verdict"] = self.verdicts[finding.fingerprint]
        return finding.to_json() | extra

    def to_json(self, *, list_suppressed: bool = False) -> dict[str, object]:
        body: dict[str, object] = {
            "files_scanned": self.files_scanned,
            "findings": [self.finding_json(f) for f in self.findings],
            "suppressed": self.suppressed,
            "suppressed_inline": self.suppressed_inline,
            "suppressed_baseline": self.suppressed_baseline,
            "suppressed_excluded": self.suppressed_excluded,
            "baseline": self.baseline,
            "engine": self.engine,
            "unreadable": [u.to_json() for u in self.unreadable],
            "skipped": [u.to_json() for u in self.skipped],
            "files_excluded": self.files_excluded,
        }
        if list_suppressed:
            body["suppressed_findings"] = [
                s.to_json() | {"abs_path": self.abs_paths.get(s.finding.path, s.finding.path)}
                for s in self.suppressed_findings
            ]
        return body


def _stable(finding: SecretFinding, key: str, text: str) -> SecretFinding:
    """The finding fingerprinted by its path relative to the scan root, not to wherever the
    scan was run from, so a baseline keeps matching from any current folder."""
    if key == finding.path:
        return finding
    secret = text[finding.start : finding.end]
    return replace(finding, fingerprint=fingerprint(finding.rule_id, key, secret))


def fingerprint_key(file: Path, root: Path) -> str:
    """How a file is named in fingerprints: relative to the folder that was scanned; a file
    named on its own, relative to its git repository (else by its name)."""
    absolute = Path(os.path.abspath(file))
    if os.path.isdir(root):
        base = Path(os.path.abspath(root))
    else:
        base = _repository(absolute.parent) or absolute.parent
    return os.path.relpath(absolute, base).replace(os.sep, "/")


def _repository(folder: Path) -> Path | None:
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def _files_with_keys(
    paths: Sequence[str | Path], on_error: Callable[[OSError], None] | None
) -> Iterator[tuple[Path, str]]:
    for raw in paths:
        for file in iter_files([raw], on_error=on_error):
            yield file, fingerprint_key(file, Path(raw))


def iter_files(
    paths: Sequence[str | Path], on_error: Callable[[OSError], None] | None = None
) -> Iterator[Path]:
    """Every regular file named or under the named folders, sorted, without following links.

    A symlink named directly is scanned; symlinks met inside folders are not followed.
    Folders that cannot be listed go to `on_error`.
    """
    for raw in paths:
        path = Path(raw)
        if not path.exists() and not path.is_symlink():
            raise NotFoundError(f"no such file or folder: {raw}")
        if not path.is_dir():
            yield path
            continue
        for root, folders, files in os.walk(path, onerror=on_error):
            folders[:] = sorted(f for f in folders if f not in SKIPPED_FOLDERS)
            for name in sorted(files):
                candidate = Path(root, name)
                if candidate.is_file() and not candidate.is_symlink():
                    yield candidate


def read_text(path: Path) -> str:
    """A file as Node reads it with `utf8`: invalid bytes become U+FFFD, never an error.
    Only a regular file under the scan limit is read (a pipe would never end).

    A file that starts with a UTF-16 byte-order mark is decoded as UTF-16 instead: read as
    UTF-8, every other byte is a NUL and no rule could match, yet a push would still send the
    secret's characters."""
    data = userfiles.read_bytes(path, userfiles.SCANNED_FILE_LIMIT, "a scanned file")
    utf16 = userfiles.utf16_text(data)
    return utf16 if utf16 is not None else data.decode("utf-8", errors="replace")


STDIN_NAME = "<stdin>"


def scan_files(
    paths: Sequence[str | Path],
    *,
    display: Callable[[Path], str] = str,
    baseline: Baseline | None = None,
    backend: str | None = None,
    exclusions: Exclusions | None = None,
    max_size: int | None = None,
    texts: Sequence[tuple[str, str]] = (),
    on_progress: ProgressCallback | None = None,
) -> SecretScanReport:
    """Scan files and folders, then `texts` ((name, text) pairs, e.g. standard input, named
    as given in findings and fingerprints); `display` names each file in findings.

    `exclusions` leave files out unread and findings out of the report; files larger than
    `max_size` bytes are skipped and listed. `on_progress` hears about every file read (it
    may raise `OperationCancelled` to stop the scan)."""
    prefilter = get_prefilter(backend)
    source_kept: list[SecretFinding] = []
    source_dropped: list[Suppressed] = []
    everything: list[SecretFinding] = []
    unreadable: list[UnreadableFile] = []
    skipped: list[UnreadableFile] = []
    abs_paths: dict[str, str] = {}
    scanned = excluded = 0
    batch: list[tuple[str, str]] = []
    batch_bytes = 0

    keys: dict[str, str] = {}

    def flush() -> None:
        nonlocal batch_bytes
        results = find_secrets_many(batch, backend=backend)
        for (name, text), found in zip(batch, results, strict=True):
            findings = [_stable(f, keys[name], text) for f in found]
            everything.extend(findings)
            outcome = suppress_in_source(text, findings, exclusions)
            source_kept.extend(outcome.kept)
            source_dropped.extend(outcome.suppressed_findings)
        batch.clear()
        batch_bytes = 0

    def unlistable(exc: OSError) -> None:
        name = display(Path(exc.filename)) if exc.filename else "?"
        unreadable.append(UnreadableFile(name, exc.strerror or exc.__class__.__name__))

    files = list(_files_with_keys(paths, unlistable))
    report = Reporter(on_progress, "scanning", len(files) + len(texts), unit="files")
    report(0, force=True)
    for number, (file, key) in enumerate(files):
        if report.active:
            report(number, key)
        if exclusions and exclusions.excludes_path(key):
            excluded += 1
            continue
        name = display(file)
        keys[name] = key
        try:
            if max_size is not None and (size := file.stat().st_size) > max_size:
                skipped.append(UnreadableFile(name, f"{size:,} bytes, over --max-size"))
                continue
            text = read_text(file)
        except OSError as exc:
            unreadable.append(UnreadableFile(name, exc.strerror or exc.__class__.__name__))
            continue
        scanned += 1
        abs_paths[name] = os.path.abspath(file)
        batch.append((name, text))
        batch_bytes += len(text)
        if batch_bytes >= BATCH_BYTES:
            flush()
    for name, text in texts:
        keys[name] = name
        if max_size is not None and len(text.encode("utf-8", "surrogatepass")) > max_size:
            skipped.append(UnreadableFile(name, "over --max-size"))
            continue
        scanned += 1
        batch.append((name, text))
    if batch:
        flush()
    report.finish()
    in_source = SuppressionResult(tuple(source_kept), tuple(source_dropped))
    return SecretScanReport(
        files_scanned=scanned,
        findings=in_source.kept,
        suppressed_findings=in_source.suppressed_findings,
        engine=prefilter.name,
        unreadable=tuple(unreadable),
        skipped=tuple(skipped),
        files_excluded=excluded,
        abs_paths=abs_paths,
        all_findings=tuple(everything),
        in_source=in_source,
    ).with_baseline(baseline)
