# syntax=docker/dockerfile:1.7
# amsync container image: multi-stage, non-root, read-only root filesystem friendly.
# Build:  docker build -t amsync --build-arg REVISION="$(git rev-parse HEAD)" .
# Run:    docker run --init --read-only -v amsync-state:/var/lib/amsync \
#           -e AMSYNC_URL=... -e AMSYNC_TOKEN_FILE=/run/secrets/amsync-token \
#           -v "$PWD/access:/etc/amsync:ro" amsync daemon --listen 0.0.0.0:9477
#         (a folder holding access.yaml, mounted whole: the daemon watches the folder, which
#         sees an editor replacing the file; a single-file mount keeps the old one)
# One-shot commands (CI) work the same way: docker run ... -v "$PWD:/work" -w /work amsync plan
# See examples/docker-compose.yaml (emulator + daemon), and README.md ("Install", "Container
# image", "Using amsync in CI and GitOps").

# The base, pinned by digest so that a rebuild is reproducible: node:24-bookworm-slim (Node
# 24 LTS, 24.18.0 when pinned). Not checked against the registry where this was written (no
# Docker engine there); check and move it with
#   docker buildx imagetools inspect node:24-bookworm-slim
# and pass another with --build-arg NODE_IMAGE=node:24-bookworm-slim@sha256:<digest>.
ARG NODE_IMAGE=node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d

# --- build: compile and bundle with the dev dependencies; gather what the image ships in /out ---
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
# --ignore-scripts: the prepare script needs the sources, which are copied next.
RUN --mount=type=cache,target=/root/.npm \
    npm ci --ignore-scripts --no-audit --no-fund
COPY src ./src
COPY config ./config
COPY bin ./bin
# The build's second step: the CLI bundled into dist/bundle/, what bin/amsync.js loads, and
# dist/runtime/package.json, the package with only the dependencies the bundle leaves external.
COPY bundle-cli.mjs ./
RUN npm run build
# A smoke test of the bundle. The examples stay in this stage: the image ships none of them.
COPY examples ./examples
RUN node bin/amsync.js validate -f examples/minimal.yaml
# What the image ships (docs/image.md): the bundle without its source maps, the launcher, the
# JSON Schemas, and the production dependencies the bundle does not contain (not zod or
# commander, which it does), at the versions package-lock.json pins; no tsc output, no sources.
RUN --mount=type=cache,target=/root/.npm \
    mkdir -p /out/dist /out/config \
 && cp -r dist/bundle /out/dist/bundle && rm -f /out/dist/bundle/*.map \
 && cp -r bin /out/bin && cp config/*.json /out/config/ \
 && cp dist/runtime/package.json package-lock.json /out/ \
 && cd /out && npm install --omit=dev --ignore-scripts --no-audit --no-fund

# --- runtime: node, the bundle and the dependencies it does not contain; nothing else ---
FROM ${NODE_IMAGE} AS runtime
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="amsync" \
      org.opencontainers.image.description="Declarative reconciler for the Access Management Service (SSH users and apikeys): plan/apply, saved plans, sidecar daemon" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.documentation="https://example.invalid/amsync#readme" \
      org.opencontainers.image.source="https://example.invalid/amsync"
# The state file (password fingerprints) lives on the volume; the desired file is mounted at
# /etc/amsync. The health check asks the daemon's /healthz here; change it with --listen.
ENV NODE_ENV=production \
    AMSYNC_STATE_FILE=/var/lib/amsync/state.json \
    AMSYNC_FILE=/etc/amsync/access.yaml \
    AMSYNC_HEALTHCHECK_URL=http://127.0.0.1:9477/healthz
WORKDIR /app
COPY --from=build --chown=root:root /out/ ./
# No examples (their demo secret files included): `amsync demo` in the image takes the
# repository's examples folder mounted, -v "$PWD/examples:/app/examples:ro".
# State and token files live on a volume, so the root filesystem can be mounted read-only.
# The code is owned by root and not writable by the runtime user.
RUN ln -s /app/bin/amsync.js /usr/local/bin/amsync \
 && mkdir -p /var/lib/amsync /etc/amsync \
 && chown 1000:1000 /var/lib/amsync
VOLUME ["/var/lib/amsync"]
# Numeric (the image's `node` user): Kubernetes can then verify runAsNonRoot without a
# runAsUser of its own.
USER 1000:1000
EXPOSE 9477
# No curl in the image: node's own fetch asks the daemon's liveness endpoint. Only the daemon
# serves it; `docker run ... amsync sync` exits long before the first check.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.AMSYNC_HEALTHCHECK_URL).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["amsync"]
CMD ["daemon", "--listen", "0.0.0.0:9477"]
