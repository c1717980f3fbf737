#!/bin/sh
# Container entry point: apply schema migrations once, then serve with gunicorn's workers
# (each worker's app also checks the schema, and finds nothing left to do).
set -eu
workbench team-server migrate
exec gunicorn -c /etc/workbench/gunicorn.conf.py "$@" "workbench.server.app:create_app()"
