# syntax=docker/dockerfile:1
# One image, two entry points:
#   docker run IMAGE worker    # the Temporal worker (health on :8081, drains on SIGTERM)
#   docker run IMAGE gateway   # the AG-UI gateway on :8000 (0.0.0.0): needs AUTH_MODE=jwt
#                              # or api_key; `dev`/`none` refuse to start off loopback
# Every setting comes from the environment (see docs/settings.md).
ARG PYTHON_VERSION=3.11

# ---- web UI -------------------------------------------------------------------
# The reference chat + approvals UI (web/, TanStack AI React). It imports the
# published tool definitions from examples/tools, so both go in. Vite writes it where
# `make web` does (ag_ui_temporal/web); the image serves it from /opt/web (WEB_DIST).
FROM node:20-slim AS web
WORKDIR /src/web
COPY web/package.json web/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY web/ ./
COPY examples/tools/ /src/examples/tools/
RUN npm run build

# ---- build: a virtualenv with the app and its server extra ---------------------
FROM python:${PYTHON_VERSION}-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv
WORKDIR /src
COPY pyproject.toml README.md ./
COPY ag_ui_temporal/ ag_ui_temporal/
# The server (workers, gateway, store, notifications): docs/operations.md#installing.
RUN /opt/venv/bin/pip install --quiet '.[server]'

# ---- runtime: slim, non-root ---------------------------------------------------
FROM python:${PYTHON_VERSION}-slim
RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin app \
    && mkdir -p /data && chown 10001 /data
COPY --from=build /opt/venv /opt/venv
COPY --from=web /src/ag_ui_temporal/web /opt/web
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    DATA_DIR=/data \
    GATEWAY_HOST=0.0.0.0 \
    GATEWAY_PORT=8000 \
    WORKER_HEALTH_HOST=0.0.0.0 \
    WORKER_HEALTH_PORT=8081 \
    WEB_DIST=/opt/web
USER 10001
WORKDIR /data
EXPOSE 8000 8081
ENTRYPOINT ["ag-ui-temporal"]
CMD ["gateway"]
