#!/bin/sh
# The two secrets compose.yaml needs, made once: a bearer token for the team
# (deploy/team-tokens.txt) and the database password (POSTGRES_PASSWORD in .env).
# An existing one is never replaced; neither file is tracked by git.
set -eu
cd "$(dirname "$0")/.."
new() { python3 -c 'import secrets; print(secrets.token_urlsafe(32))'; }
if [ ! -s deploy/team-tokens.txt ]; then
  echo "default=$(new)" > deploy/team-tokens.txt
  echo "made deploy/team-tokens.txt (teammates use the token after 'default=')"
fi
if ! grep -qs '^POSTGRES_PASSWORD=.' .env; then
  echo "POSTGRES_PASSWORD=$(new)" >> .env
  echo "made POSTGRES_PASSWORD in .env"
fi
