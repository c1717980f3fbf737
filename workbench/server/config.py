"""The team server's settings, from the command line or from the environment.

The app factory (`workbench.server.app:create_app`, for `uvicorn --factory` and gunicorn) reads
them from the environment; `workbench team-server` reads its options (whose defaults come from
the same variables) and hands its workers the result through the environment, so every worker
of every launcher runs with the same settings.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from workbench.server.database import Database, parse_database

DEFAULT_MAX_ENTRIES = 2_000
# The client batches PUTs under 200,000 bytes but sends a single entry of up to 250,000 bytes
# (more once JSON-escaped) alone, so the default leaves room for that.
DEFAULT_MAX_BODY_BYTES = 2_000_000
DEFAULT_RATE_LIMIT = 50.0
"""Requests per second per token, sustained (0 turns limits off)."""
DEFAULT_RATE_BURST = 200
"""Requests a token may make at once before the sustained rate applies."""
DEFAULT_POOL_SIZE = 10
DEFAULT_ORGANIZATION = "default"
LOG_FORMATS = ("json", "text", "off")

ENV_DB = "WORKBENCH_SERVER_DB"
ENV_TOKEN = "WORKBENCH_TEAM_TOKEN"
ENV_TOKEN_FILE = "WORKBENCH_SERVER_TOKEN_FILE"
ENV_TOKENS_JSON = "WORKBENCH_SERVER_TOKENS"  # from `team-server --workers` to its workers
ENV_MAX_ENTRIES = "WORKBENCH_SERVER_MAX_ENTRIES"
ENV_MAX_BODY = "WORKBENCH_SERVER_MAX_BODY_BYTES"
ENV_RATE = "WORKBENCH_SERVER_RATE_LIMIT"
ENV_BURST = "WORKBENCH_SERVER_RATE_BURST"
ENV_POOL = "WORKBENCH_SERVER_POOL_SIZE"
ENV_MIGRATE = "WORKBENCH_SERVER_MIGRATE"
ENV_METRICS_TOKEN = "WORKBENCH_SERVER_METRICS_TOKEN"
ENV_LOG = "WORKBENCH_SERVER_LOG"

_ORG_PREFIX = re.compile(r"^([A-Za-z0-9_.-]{1,64})=(.+)$")


class ConfigError(ValueError):
    """A setting that cannot be used; the message is one line and holds no secret."""


def parse_token_specs(specs: Iterable[str]) -> dict[str, str]:
    """Token specs as token → organization.

    `ORG=TOKEN` names the organization; a bare `TOKEN` belongs to the `default` organization,
    so plain tokens handed to teammates all share one team's memory.
    """
    tokens: dict[str, str] = {}
    for spec in specs:
        match = _ORG_PREFIX.match(spec)
        if match:
            tokens[match.group(2)] = match.group(1)
        elif spec:
            tokens[spec] = DEFAULT_ORGANIZATION
    return tokens


def split_env_tokens(value: str) -> list[str]:
    """`WORKBENCH_TEAM_TOKEN` may hold several specs, separated by commas or white space."""
    return [part for part in re.split(r"[\s,]+", value) if part]


def read_token_file(path: str | os.PathLike[str]) -> tuple[dict[str, str], str | None]:
    """Token specs from a file (one per line, `#` comments) and a warning about its mode."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
        mode = file.stat().st_mode
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise ConfigError(f"cannot read the token file {file}: {reason}") from None
    specs = [line.strip() for line in text.splitlines()]
    tokens = parse_token_specs(s for s in specs if s and not s.startswith("#"))
    if not tokens:
        raise ConfigError(f"the token file {file} holds no token")
    warning = None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        warning = f"the token file {file} can be read by other users (chmod 600 it)"
    return tokens, warning


def default_database() -> str:
    from workbench.paths import state_dir

    return str(state_dir("server") / "team-memory.sqlite3")


@dataclass
class ServerConfig:
    """Everything a worker needs to serve."""

    db: Database
    tokens: dict[str, str]
    max_entries: int = DEFAULT_MAX_ENTRIES
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    rate_limit: float = DEFAULT_RATE_LIMIT
    rate_burst: int = DEFAULT_RATE_BURST
    pool_size: int = DEFAULT_POOL_SIZE
    migrate: bool = True
    metrics_token: str | None = None
    log_format: str = "json"
    warnings: list[str] = field(default_factory=list)

    def check(self) -> None:
        """ConfigError for a value no server can use."""
        if not self.tokens:
            raise ConfigError(
                f"no bearer token: give --token-file, set {ENV_TOKEN} or {ENV_TOKEN_FILE}, "
                "or (on loopback) --token"
            )
        if self.max_entries < 1 or self.max_body_bytes < 1024:
            raise ConfigError("--max-entries must be at least 1 and --max-body-bytes at least 1024")
        if self.rate_limit < 0 or (self.rate_limit > 0 and self.rate_burst < 1):
            raise ConfigError("--rate-limit must be 0 (off) or more, with --rate-burst at least 1")
        if self.pool_size < 1:
            raise ConfigError("--pool-size must be at least 1")
        if self.log_format not in LOG_FORMATS:
            raise ConfigError(f"--log-format must be one of {', '.join(LOG_FORMATS)}")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, *, check: bool = True) -> ServerConfig:
        """The settings the environment gives (what the app factory serves with); `check`
        False leaves checking to a caller that adds settings of its own."""
        env = os.environ if env is None else env
        warnings: list[str] = []
        tokens: dict[str, str] = {}
        if env.get(ENV_TOKENS_JSON):
            try:
                tokens.update({str(k): str(v) for k, v in json.loads(env[ENV_TOKENS_JSON]).items()})
            except (ValueError, AttributeError):
                raise ConfigError(f"{ENV_TOKENS_JSON} is not a JSON object") from None
        if env.get(ENV_TOKEN_FILE):
            found, warning = read_token_file(env[ENV_TOKEN_FILE])
            tokens.update(found)
            if warning:
                warnings.append(warning)
        tokens.update(parse_token_specs(split_env_tokens(env.get(ENV_TOKEN, ""))))
        try:
            db = parse_database(env.get(ENV_DB) or default_database())
        except ValueError as exc:
            raise ConfigError(f"{ENV_DB}: {exc}") from None
        config = cls(
            db=db,
            tokens=tokens,
            max_entries=_number(env, ENV_MAX_ENTRIES, DEFAULT_MAX_ENTRIES, int),
            max_body_bytes=_number(env, ENV_MAX_BODY, DEFAULT_MAX_BODY_BYTES, int),
            rate_limit=_number(env, ENV_RATE, DEFAULT_RATE_LIMIT, float),
            rate_burst=_number(env, ENV_BURST, DEFAULT_RATE_BURST, int),
            pool_size=_number(env, ENV_POOL, DEFAULT_POOL_SIZE, int),
            migrate=env.get(ENV_MIGRATE, "1").strip().lower() not in ("0", "no", "false", "off"),
            metrics_token=env.get(ENV_METRICS_TOKEN) or None,
            log_format=(env.get(ENV_LOG) or "json").strip().lower(),
            warnings=warnings,
        )
        if check:
            config.check()
        return config

    def to_env(self) -> dict[str, str]:
        """Variables that make `from_env` in a worker return these settings."""
        env = {
            ENV_DB: self.db.location,
            ENV_TOKENS_JSON: json.dumps(self.tokens),
            ENV_MAX_ENTRIES: str(self.max_entries),
            ENV_MAX_BODY: str(self.max_body_bytes),
            ENV_RATE: repr(self.rate_limit),
            ENV_BURST: str(self.rate_burst),
            ENV_POOL: str(self.pool_size),
            ENV_MIGRATE: "1" if self.migrate else "0",
            ENV_LOG: self.log_format,
            ENV_TOKEN: "",
            ENV_TOKEN_FILE: "",
        }
        if self.metrics_token:
            env[ENV_METRICS_TOKEN] = self.metrics_token
        return env


_Number = TypeVar("_Number", int, float)


def _number(
    env: Mapping[str, str], name: str, default: _Number, kind: Callable[[str], _Number]
) -> _Number:
    raw = env.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        return kind(raw.strip())
    except ValueError:
        raise ConfigError(f"{name} must be a number, got {raw!r}") from None
