"""Scanning files and folders for secrets, with suppression, as one report for CLI and UI."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from workbench.engine import userfiles
from workbench.engine.errors import NotFoundError
from workbench.engine.team.secrets.fingerprint import fingerprint
from workbench.engine.team.secrets.prefilter import get_prefilter
from workbench.engine.team.secrets.scanner import SecretFinding, find_secrets_many
from workbench.engine.team.secrets.suppression import Baseline, suppress

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
    """What `scan-secrets` found: reported findings and how many were suppressed."""

    files_scanned: int
    findings: tuple[SecretFinding, ...]
    suppressed: int
    suppressed_inline: int = 0
    suppressed_baseline: int = 0
    engine: str = ""
    baseline: str | None = None
    unreadable: tuple[UnreadableFile, ...] = ()
    abs_paths: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    all_findings: tuple[SecretFinding, ...] = field(default=(), compare=False, repr=False)
    """Reported and suppressed findings together (what a new baseline would list)."""

    @property
    def needs_action(self) -> bool:
        """True when a finding is left after suppression (the CLI exits 1)."""
        return bool(self.findings)

    def to_json(self) -> dict[str, object]:
        return {
            "files_scanned": self.files_scanned,
            "findings": [
                f.to_json() | {"abs_path": self.abs_paths.get(f.path, f.path)}
                for f in self.findings
            ],
            "suppressed": self.suppressed,
            "suppressed_inline": self.suppressed_inline,
            "suppressed_baseline": self.suppressed_baseline,
            "baseline": self.baseline,
            "engine": self.engine,
            "unreadable": [u.to_json() for u in self.unreadable],
        }


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
    Only a regular file under the scan limit is read (a pipe would never end)."""
    return userfiles.read_text(path, userfiles.SCANNED_FILE_LIMIT, "a scanned file")


def scan_files(
    paths: Sequence[str | Path],
    *,
    display: Callable[[Path], str] = str,
    baseline: Baseline | None = None,
    backend: str | None = None,
) -> SecretScanReport:
    """Scan files and folders; `display` names each file in findings and fingerprints."""
    prefilter = get_prefilter(backend)
    kept: list[SecretFinding] = []
    everything: list[SecretFinding] = []
    unreadable: list[UnreadableFile] = []
    abs_paths: dict[str, str] = {}
    inline = by_baseline = scanned = 0
    batch: list[tuple[str, str]] = []
    batch_bytes = 0

    keys: dict[str, str] = {}

    def flush() -> None:
        nonlocal inline, by_baseline, batch_bytes
        results = find_secrets_many(batch, backend=backend)
        for (name, text), found in zip(batch, results, strict=True):
            findings = [_stable(f, keys[name], text) for f in found]
            everything.extend(findings)
            outcome = suppress(text, findings, baseline)
            kept.extend(outcome.kept)
            inline += outcome.inline
            by_baseline += outcome.baseline
        batch.clear()
        batch_bytes = 0

    def unlistable(exc: OSError) -> None:
        name = display(Path(exc.filename)) if exc.filename else "?"
        unreadable.append(UnreadableFile(name, exc.strerror or exc.__class__.__name__))

    for file, key in _files_with_keys(paths, unlistable):
        name = display(file)
        keys[name] = key
        try:
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
    if batch:
        flush()
    return SecretScanReport(
        files_scanned=scanned,
        findings=tuple(kept),
        suppressed=inline + by_baseline,
        suppressed_inline=inline,
        suppressed_baseline=by_baseline,
        engine=prefilter.name,
        baseline=baseline.source if baseline else None,
        unreadable=tuple(unreadable),
        abs_paths=abs_paths,
        all_findings=tuple(everything),
    )
