#!/bin/sh
# Installs svc-server from its packed tarballs into an application folder, production dependencies
# only: what the Dockerfile's runtime stage runs, and what scripts/image-steps.sh runs in an empty
# directory (no container runtime needed). Usage: install-from-tarballs.sh <tarball-dir> <app-dir>
# The tarballs name each other by version and are not published, so overrides point those names at
# the files; with published packages `pnpm add --prod @svc/server` is the same.
set -eu
tarballs=$(cd "$1" && pwd)
app=$2
server=$(ls "$tarballs"/svc-server-*.tgz)
schemas=$(ls "$tarballs"/svc-schemas-*.tgz)
mkdir -p "$app"
cd "$app"
printf '{"name":"svc-app","private":true,"type":"module","dependencies":{"@svc/server":"file:%s"}}\n' "$server" >package.json
cat >pnpm-workspace.yaml <<YAML
overrides:
  '@svc/schemas': 'file:$schemas'
allowBuilds:
  protobufjs: false
YAML
# --prod: no devDependencies; --prefer-offline uses a pnpm store when one is there (CI's), the registry otherwise.
pnpm install --prod --prefer-offline --config.confirmModulesPurge=false
