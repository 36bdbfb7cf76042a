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

# Pin by digest in production (node:24-bookworm-slim@sha256:...), so a rebuild is reproducible.
ARG NODE_VERSION=24

# --- build: compile TypeScript with the dev dependencies, then keep production ones only ---
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
# --ignore-scripts: the prepare script needs the sources, which are copied next.
RUN --mount=type=cache,target=/root/.npm \
    npm ci --ignore-scripts --no-audit --no-fund
COPY src ./src
COPY config ./config
COPY bin ./bin
# The build's second step: the CLI bundled into dist/bundle/, what bin/amsync.js loads.
COPY bundle-cli.mjs ./
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# --- runtime: node, the compiled code and production dependencies; nothing else ---
FROM node:${NODE_VERSION}-bookworm-slim AS runtime
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
COPY --from=build --chown=root:root /app/package.json /app/package-lock.json ./
COPY --from=build --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
COPY --from=build --chown=root:root /app/bin ./bin
COPY --from=build --chown=root:root /app/config ./config
# The examples make `docker run --rm --tmpfs /tmp amsync demo` work, and are tiny.
COPY --chown=root:root examples ./examples
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
