# syntax=docker/dockerfile:1
# svc-server's container image: docs/deploy.md#the-container-image.
# No container runtime runs on the development machines, so this image has not been built there:
# scripts/image-steps.sh performs its build and start steps in an empty directory (the same
# install script, a non-root user, the same healthcheck command), and CI runs that script.
ARG NODE_VERSION=24.21.0
ARG PNPM_VERSION=12.26.0

# 1. Build: the workspace, packed as npm would publish it (prepack builds the embedded database's
#    migrated template, the bundles and the web console).
FROM node:${NODE_VERSION}-bookworm-slim AS build
ARG PNPM_VERSION
RUN npm install -g pnpm@${PNPM_VERSION}
WORKDIR /src
COPY . .
RUN pnpm install --frozen-lockfile
RUN mkdir /tarballs && for name in schemas server; do (cd packages/$name && pnpm pack --pack-destination /tarballs); done

# 2. Install: the tarballs with production dependencies only, into /opt/svc/app.
FROM node:${NODE_VERSION}-bookworm-slim AS install
ARG PNPM_VERSION
RUN npm install -g pnpm@${PNPM_VERSION}
COPY --from=build /tarballs /tarballs
COPY deploy/install-from-tarballs.sh deploy/healthcheck.mjs /opt/svc/
RUN sh /opt/svc/install-from-tarballs.sh /tarballs /opt/svc/app

# 3. Run: Node and the installed app, no pnpm, no sources, no build tools; a non-root user.
FROM node:${NODE_VERSION}-bookworm-slim
ENV NODE_ENV=production \
    SVC_HOST=0.0.0.0 \
    SVC_PORT=8787 \
    SVC_DATA_DIR=/data
COPY --from=install /opt/svc /opt/svc
# The data directory holds the embedded database (when DATABASE_URL is unset), local objects and
# the generated secret files: a volume, owned by the image's non-root `node` user (uid 1000).
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 8787
# /readyz: 200 when the server takes traffic, 503 while it drains or cannot reach its database.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 CMD ["node", "/opt/svc/healthcheck.mjs"]
# Node is PID 1 and handles SIGTERM itself: /readyz fails, in-flight requests finish, then it exits.
ENTRYPOINT ["node", "/opt/svc/app/node_modules/@svc/server/dist/bin.js"]
CMD ["start"]
