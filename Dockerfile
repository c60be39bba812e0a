# syntax=docker/dockerfile:1
# The hosted service as an image: `docker build -t switchboard .`, then
#   docker run -p 3000:3000 -v switchboard-data:/data switchboard
# (SQLite and its generated key in the /data volume), or PostgreSQL with compose.yaml. docs/deploy.md.
#
# Stage 1 builds dist/ with the devDependencies (TypeScript), then drops them: `npm prune --omit=dev`
# leaves the runtime dependencies of the lock file, better-sqlite3's native addon included.
FROM node:22-bookworm-slim AS build
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY package.json package-lock.json ./
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs scripts/build.mjs
COPY src src
COPY generated generated
COPY connectors connectors
COPY bin bin
RUN npm ci --no-audit --no-fund && npm prune --omit=dev --no-audit --no-fund

# Stage 2: what runs. No compiler, no TypeScript, no root.
FROM node:22-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    SWITCHBOARD_DATA_DIR=/data
WORKDIR /app
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY --from=build /src/bin ./bin
COPY --from=build /src/connectors ./connectors
COPY --from=build /src/generated ./generated
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Node as PID 1: `switchboard serve` handles SIGTERM itself (docker stop drains and exits 0).
CMD ["node", "bin/switchboard.js", "serve"]
