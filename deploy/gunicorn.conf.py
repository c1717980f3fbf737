"""gunicorn settings for the team server (`gunicorn -c deploy/gunicorn.conf.py
'workbench.server.app:create_app()'`); the container image runs it this way.

Every value can be overridden on the command line or with GUNICORN_CMD_ARGS. The app reads its
own settings (database, tokens, limits) from WORKBENCH_SERVER_* variables in each worker.
"""

import os
import shutil
from pathlib import Path

bind = os.environ.get("WORKBENCH_SERVER_BIND", "0.0.0.0:8765")
workers = int(os.environ.get("WORKBENCH_SERVER_WORKERS", "2"))
worker_class = "uvicorn_worker.UvicornWorker"
graceful_timeout = 10
timeout = 60
accesslog = None  # the app logs every request itself, as JSON with its request id
preload_app = False  # each worker opens its own database pool


def on_starting(server):
    # prometheus_client's multiprocess folder must start empty: files of an earlier run's
    # processes would add their old counts to the new ones.
    folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if folder:
        path = Path(folder)
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True, exist_ok=True)


def child_exit(server, worker):
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)
