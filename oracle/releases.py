"""Claude Code releases from npm, installed once into a cache folder outside the repository.

2.1.88 ships `cli.js`, run under node; later releases ship a native binary in the optional
dependency `@anthropic-ai/claude-code-linux-x64`, run directly (the wrapper's postinstall is
skipped with `--ignore-scripts`; it would only copy that binary).
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "@anthropic-ai/claude-code"
OLDEST = "2.1.88"
"""The release the specs were written from; the bisection's lower end."""
NEWEST_KNOWN = "2.1.332"
"""The newest release when the harness was written; `newest()` asks npm for today's."""


def cache_root() -> Path:
    """`$ORACLE_CACHE`, else `$XDG_CACHE_HOME/memory-workbench/oracle` (~/.cache by default)."""
    configured = os.environ.get("ORACLE_CACHE")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "memory-workbench" / "oracle"


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version.split("-")[0]))


def is_stable(version: str) -> bool:
    return re.fullmatch(r"\d+\.\d+\.\d+", version) is not None


def _native_package() -> str:
    machine = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower(), "x64"
    )
    return f"{PACKAGE}-linux-{machine}"


@dataclass(frozen=True)
class Release:
    """One installed release and the command that runs it."""

    version: str
    folder: Path
    argv: tuple[str, ...]

    @property
    def native(self) -> bool:
        return self.argv[0] != "node"


class InstallError(RuntimeError):
    pass


def npm_versions(*, refresh: bool = False) -> list[str]:
    """Every stable 2.x release npm lists, oldest first (cached for a day in the cache folder)."""
    import time

    cache = cache_root() / "versions.json"
    if not refresh and cache.exists() and time.time() - cache.stat().st_mtime < 86_400:
        versions = json.loads(cache.read_text(encoding="utf-8"))
    else:
        out = subprocess.run(
            ["npm", "view", PACKAGE, "versions", "--json"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if out.returncode != 0:
            raise InstallError(f"npm view failed: {out.stderr.strip().splitlines()[-1:]}")
        versions = json.loads(out.stdout)
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(versions), encoding="utf-8")
    return sorted((v for v in versions if is_stable(v)), key=version_key)


def between(low: str, high: str, *, versions: list[str] | None = None) -> list[str]:
    """The stable releases from `low` to `high`, both included, oldest first."""
    versions = versions if versions is not None else npm_versions()
    lo, hi = version_key(low), version_key(high)
    return [v for v in versions if lo <= version_key(v) <= hi]


def newest() -> str:
    return npm_versions()[-1]


def locate(version: str) -> Release | None:
    """The installed release, or None when it is not in the cache yet."""
    folder = cache_root() / version
    modules = folder / "node_modules"
    cli_js = modules / PACKAGE / "cli.js"
    if cli_js.is_file():
        return Release(version, folder, ("node", str(cli_js)))
    binary = modules / _native_package() / "claude"
    if binary.is_file() and os.access(binary, os.X_OK):
        return Release(version, folder, (str(binary),))
    return None


def install(version: str) -> Release:
    """Install `version` into the cache (once; later calls reuse it)."""
    found = locate(version)
    if found is not None:
        return found
    folder = cache_root() / version
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    out = subprocess.run(
        [
            "npm",
            "install",
            "--prefix",
            str(partial),
            f"{PACKAGE}@{version}",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
        ],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if out.returncode != 0:
        shutil.rmtree(partial, ignore_errors=True)
        tail = (out.stderr.strip().splitlines() or ["no output"])[-1]
        raise InstallError(f"npm install {PACKAGE}@{version} failed: {tail}")
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)  # a folder in the cache is always a complete install
    found = locate(version)
    if found is None:
        raise InstallError(f"{PACKAGE}@{version} installed but has no runnable CLI")
    return found


def uninstall(version: str) -> None:
    shutil.rmtree(cache_root() / version, ignore_errors=True)


def prune(keep: set[str]) -> list[str]:
    """Remove cached releases not in `keep` (the bisection's probes take ~400 MB each)."""
    removed = []
    root = cache_root()
    if not root.is_dir():
        return removed
    for child in root.iterdir():
        if child.is_dir() and is_stable(child.name) and child.name not in keep:
            shutil.rmtree(child, ignore_errors=True)
            removed.append(child.name)
    return removed
