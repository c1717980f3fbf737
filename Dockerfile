# The team-memory server: gunicorn with uvicorn workers over PostgreSQL (see compose.yaml).
# Build: docker build -t workbench-team-server .   Settings: WORKBENCH_SERVER_* variables.

FROM python:3.12-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY workbench ./workbench
COPY themes ./themes
COPY sample_projects ./sample_projects
RUN pip wheel --no-cache-dir --wheel-dir /wheels ".[server]"

FROM python:3.12-slim
RUN groupadd --system --gid 10001 workbench \
    && useradd --system --uid 10001 --gid 10001 --create-home --home-dir /var/lib/workbench workbench
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-index --find-links=/wheels /wheels/*.whl \
    && rm -rf /wheels
COPY deploy/gunicorn.conf.py /etc/workbench/gunicorn.conf.py
COPY deploy/entrypoint.sh /usr/local/bin/workbench-team-server
ENV PYTHONUNBUFFERED=1 \
    WORKBENCH_HOME=/var/lib/workbench \
    WORKBENCH_SERVER_BIND=0.0.0.0:8765 \
    PROMETHEUS_MULTIPROC_DIR=/tmp/workbench-metrics
USER 10001:10001
WORKDIR /var/lib/workbench
EXPOSE 8765
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8765/healthz', timeout=2).status != 200)"]
ENTRYPOINT ["/usr/local/bin/workbench-team-server"]
