# syntax=docker/dockerfile:1.7
# amsync container image: multi-stage, non-root, read-only root filesystem friendly.
# Build:  docker build -t amsync .
# Run:    docker run --read-only -v amsync-state:/var/lib/amsync -e AMSYNC_URL=... \
#           -e AMSYNC_TOKEN_FILE=/run/secrets/amsync-token amsync daemon --listen 0.0.0.0:9477

ARG NODE_VERSION=24

# --- build: compile TypeScript with the dev dependencies, then keep production ones only ---
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
# --ignore-scripts: the prepare script needs the sources, which are copied next.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY src ./src
COPY config ./config
COPY bin ./bin
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# --- runtime: node, the compiled code and production dependencies; nothing else ---
FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="amsync" \
      org.opencontainers.image.description="Declarative reconciler for the Access Management Service (SSH users and apikeys)" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://example.invalid/amsync"
ENV NODE_ENV=production \
    AMSYNC_STATE_FILE=/var/lib/amsync/state.json \
    AMSYNC_FILE=/etc/amsync/access.yaml
WORKDIR /app
COPY --from=build --chown=root:root /app/package.json /app/package-lock.json ./
COPY --from=build --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
COPY --from=build --chown=root:root /app/bin ./bin
COPY --from=build --chown=root:root /app/config ./config
# State (password fingerprints) and token files live on a volume, so the root filesystem can
# be mounted read-only. The code is owned by root and not writable by the runtime user.
RUN ln -s /app/bin/amsync.js /usr/local/bin/amsync \
 && mkdir -p /var/lib/amsync /etc/amsync \
 && chown node:node /var/lib/amsync
VOLUME ["/var/lib/amsync"]
USER node
EXPOSE 9477
# No curl in the image: node's own fetch asks the daemon's liveness endpoint.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:9477/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["amsync"]
CMD ["daemon", "--listen", "0.0.0.0:9477"]
