"""Test isolation shared by every test: no real config, no real home, no internet."""

from __future__ import annotations

import ipaddress
import os
import shutil
import socket
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Hypothesis's timing checks (a slow draw, a slow example) read the machine's speed; on a
# loaded 2-core machine they fail tests whose properties hold. The properties stay as strict.
settings.register_profile("workbench", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("workbench")

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
SHARED_TRANSCRIPTS = SHARED_DATA / "transcripts"

_SCRUBBED_PREFIXES = (
    "CLAUDE_",
    "ANTHROPIC_",
    "WORKBENCH_",
    "DISABLE_",
    "ENABLE_CLAUDE",
    "TEAM_MEMORY_",
    "USE_API_",
    "API_MAX_",
    "API_TARGET_",
)


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Point every config and state folder at a fresh temp dir and clear Claude's variables."""
    base = tmp_path_factory.mktemp("env")
    for name in list(os.environ):
        if name.startswith(_SCRUBBED_PREFIXES):
            monkeypatch.delenv(name, raising=False)
    home = base / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("WORKBENCH_HOME", str(base / "workbench-home"))
    monkeypatch.setenv("WORKBENCH_CONFIG", str(base / "workbench-config.toml"))
    monkeypatch.setenv("WORKBENCH_POLICY_SETTINGS", str(base / "no-managed-settings.json"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(base / "claude"))
    # Managed-policy CLAUDE.md files are read from here, never from the machine's /etc.
    monkeypatch.setenv("WORKBENCH_MANAGED_DIR", str(base / "managed"))
    # No test asks a `claude` that happens to be installed which version it is: under auto,
    # answers follow the transcript's version, else the newest profile (tests of the lookup
    # point this at a fake executable).
    monkeypatch.setenv("WORKBENCH_CLAUDE_COMMAND", "")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield base
    time.tzset()
    # Each test removes its own folders, so a run never leaves thousands behind for the next
    # run's start-up (pytest's retention policy only covers `tmp_path`).
    shutil.rmtree(base, ignore_errors=True)


def _is_local(address: object) -> bool:
    if isinstance(address, (str, bytes)):
        return True  # AF_UNIX socket path
    if not isinstance(address, tuple) or not address:
        return True
    host = address[0]
    if host in ("localhost", "", None):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def no_internet(monkeypatch: pytest.MonkeyPatch):
    """Fail any test that tries to connect anywhere but loopback."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def guarded_connect(self: socket.socket, address: object):
        if not _is_local(address):
            raise ConnectionRefusedError(f"test tried to reach the network: {address!r}")
        return real_connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: object):
        if not _is_local(address):
            raise ConnectionRefusedError(f"test tried to reach the network: {address!r}")
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
    yield


FIXED_PATH_LENGTH = 200


def fixed_length_dir(
    base: Path, length: int = FIXED_PATH_LENGTH, *, project: str | None = None
) -> Path:
    """A new folder under `base` whose absolute path is exactly `length` characters.

    Some shown figures legitimately depend on a path's length (a compaction summary names the
    transcript's absolute path, and its token estimate moves with it); tests that assert such a
    figure build their project here, so the value never depends on where pytest's temp folder is.

    `project`: the project's path below the folder. Its name is long enough that Claude Code
    shortens it with a hash, whose base-36 text is usually six characters and sometimes five;
    the padding is chosen so it is six, or the figure would move one run in thirty.
    """
    from workbench.engine.claude_paths import simple_hash

    base = base.resolve()
    pad = length - len(str(base)) - 1
    if pad < 1:
        pytest.fail(f"temp folder {len(str(base))} characters long; fixed paths need < {length}")
    for changed in range(pad):
        folder = base / ("q" * changed + "p" * (pad - changed))
        if project is None or len(simple_hash(str(folder / project))) == HASH_CHARACTERS:
            break
    folder.mkdir()
    return folder


HASH_CHARACTERS = 6
"""How long the base-36 hash of a long project name is in most cases (2^31 > 36^5)."""


@pytest.fixture
def shared_transcripts() -> Path:
    """The real transcripts in ../shared/data; the test skips when they are absent."""
    if not SHARED_TRANSCRIPTS.is_dir():
        pytest.skip("../shared/data/transcripts is not present")
    return SHARED_TRANSCRIPTS


@pytest.fixture
def fake_messages_api(monkeypatch: pytest.MonkeyPatch):
    """A fake Messages API on loopback; ANTHROPIC_BASE_URL and a dummy key point at it."""
    from fakes.messages_api import FakeMessagesAPI, fake_api_key

    key = fake_api_key()
    server = FakeMessagesAPI(api_key=key).start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def install_sample(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Install a shipped sample project under tmp_path and point CLAUDE_CONFIG_DIR at it."""
    from workbench.engine.samples import install_sample as _install

    def install(name: str = "healthy", now: float | None = None):
        sample = _install(name, tmp_path / f"sample-{name}", now=now)
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(sample.config_home))
        monkeypatch.chdir(sample.project_root)
        return sample

    return install


@pytest.fixture
def sample_engine(install_sample):
    """An Engine opened on an installed sample project (healthy unless told otherwise)."""
    from workbench.engine import Engine

    def open_engine(name: str = "healthy", claude_version: str | None = None):
        sample = install_sample(name)
        return Engine.open(
            sample.project_root,
            config_home=str(sample.config_home),
            claude_version=claude_version,
        )

    return open_engine


# --- team server stores ------------------------------------------------------------------------

STORES = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgresql)]


@pytest.fixture(scope="session")
def postgres_cluster():
    """One PostgreSQL server on loopback for the whole run, started on first use and removed
    at the end; tests that need it skip only where no PostgreSQL binaries exist."""
    from pgserver import PgCluster, unavailable_reason

    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(f"PostgreSQL store tests need a PostgreSQL server: {reason}")
    cluster = PgCluster.create()
    try:
        yield cluster
    finally:
        cluster.remove()


@pytest.fixture(params=STORES)
def store_kind(request: pytest.FixtureRequest) -> str:
    """`sqlite` or `postgresql`: the test runs once against each store."""
    return request.param


@pytest.fixture
def team_db(store_kind: str, tmp_path: Path, request: pytest.FixtureRequest):
    """Make a new, empty team-server database of the test's store kind: `team_db("name")`
    returns a SQLite path under tmp_path or a PostgreSQL URL of a fresh schema."""
    made: list[str] = []
    cluster = request.getfixturevalue("postgres_cluster") if store_kind == "postgresql" else None

    def make(name: str = "team") -> str:
        if cluster is None:
            return str(tmp_path / f"{name}.sqlite3")
        schema, url = cluster.new_schema()
        made.append(schema)
        return url

    yield make
    for schema in made:
        cluster.drop_schema(schema)
