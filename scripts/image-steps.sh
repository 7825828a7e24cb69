#!/usr/bin/env bash
# The container image's build and start steps, performed in an empty directory without a container
# runtime (none runs on the development machines), plus the deployment guide's steps that can run
# here (docs/deploy.md). CI runs it (.ci/run). What it does:
#  1. packs @svc/schemas and @svc/server (as the Dockerfile's build stage does), or takes the
#     tarballs from IMAGE_STEPS_TARBALLS;
#  2. installs them with production dependencies only through deploy/install-from-tarballs.sh (the
#     script the Dockerfile runs) into <empty dir>/opt/svc/app, beside Node 24 at usr/local/bin;
#  3. starts the Dockerfile's ENTRYPOINT and CMD as a non-root user (made with useradd when run as
#     root) on the embedded database in a data directory like the image's VOLUME, and probes the
#     Dockerfile's HEALTHCHECK command until it passes, then drains it with SIGTERM;
#  4. on PostgreSQL (IMAGE_STEPS_DATABASE_URL, default the local server): two replicas started at
#     once with the production settings, migrations applied once under the advisory lock;
#     one of them restarted beside a newer version's migration (rolling back);
#  5. Debian's nginx with deploy/nginx.conf in front of them, TLS from a self-signed certificate:
#     the public URL (the OAuth issuer) and the operator token through the proxy;
#  6. systemd-analyze verify on deploy/svc.service.
# Any failed step exits non-zero; nothing is skipped (a missing nginx or PostgreSQL is a failure).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
step() { printf '== image-steps: %s\n' "$*"; }
fail() {
  printf 'image-steps: FAILED: %s\n' "$*" >&2
  exit 1
}

work=$(mktemp -d /tmp/svc-image-steps.XXXXXX)
pids=()
database=""
admin_url=${IMAGE_STEPS_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ -n "$database" ]; then psql "$admin_url" -qc "DROP DATABASE IF EXISTS $database WITH (FORCE)" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
chmod 755 "$work"

node24=$(pnpm exec node -p process.execPath)
free_port() { "$node24" -e "const s=require('node:net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }

step "the Dockerfile: multi-stage, non-root, a volume, a healthcheck, installed from the tarballs"
[ "$(grep -c '^FROM ' Dockerfile)" -ge 2 ] || fail 'Dockerfile is not multi-stage'
grep -q '^USER node$' Dockerfile || fail 'Dockerfile does not run as the non-root node user'
grep -q '^VOLUME /data$' Dockerfile || fail 'Dockerfile has no VOLUME for the data directory'
grep -q 'SVC_DATA_DIR=/data' Dockerfile || fail 'Dockerfile does not put SVC_DATA_DIR on the volume'
grep -q 'RUN sh /opt/svc/install-from-tarballs.sh /tarballs /opt/svc/app' Dockerfile || fail 'Dockerfile does not install through deploy/install-from-tarballs.sh'
# The exec-form arrays of HEALTHCHECK and ENTRYPOINT/CMD, with the image's paths moved under $work.
exec_form() { grep "^$1" Dockerfile | sed -e 's/^.*\(\[.*\]\)$/\1/' | "$node24" -e "
  const words = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
  process.stdout.write(words.map((w) => w === 'node' ? '$work/usr/local/bin/node' : w.replace(/^\/opt\/svc\//, '$work/opt/svc/')).join('\n'));"; }
mapfile -t healthcheck < <(exec_form 'HEALTHCHECK ')
mapfile -t entrypoint < <(exec_form 'ENTRYPOINT ')
mapfile -t command < <(exec_form 'CMD ')
[ "${#healthcheck[@]}" -ge 2 ] || fail 'no HEALTHCHECK CMD in exec form'
grep -qF 'test: ["CMD", "node", "/opt/svc/healthcheck.mjs"]' compose.yaml || fail 'compose.yaml does not probe the image healthcheck'

step "pack @svc/schemas and @svc/server"
tarballs=${IMAGE_STEPS_TARBALLS:-}
if [ -z "$tarballs" ]; then
  tarballs=$work/tarballs
  mkdir "$tarballs"
  for name in schemas server; do (cd "packages/$name" && pnpm pack --pack-destination "$tarballs" >/dev/null); done
fi

step "install with production dependencies only into an empty directory"
mkdir -p "$work/opt/svc" "$work/usr/local/bin"
cp deploy/install-from-tarballs.sh deploy/healthcheck.mjs "$work/opt/svc/"
cp "$node24" "$work/usr/local/bin/node"
(cd "$work" && PATH="$work/usr/local/bin:$PATH" sh "$work/opt/svc/install-from-tarballs.sh" "$tarballs" "$work/opt/svc/app" >"$work/install.log" 2>&1) || {
  cat "$work/install.log"
  fail 'install from the tarballs'
}
for dev in typescript ava tsup vite; do [ ! -e "$work/opt/svc/app/node_modules/.pnpm/node_modules/$dev" ] || fail "a devDependency was installed: $dev"; done

# A non-root user, as the image's `node`: made here when this runs as root.
run_as=()
user=$(id -un)
if [ "$(id -u)" -eq 0 ]; then
  user=svc-image-steps
  id "$user" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$user"
  run_as=(runuser -u "$user" --)
fi
mkdir -p "$work/data"
chown "$user" "$work/data"
chmod 700 "$work/data"

# start <log> <env...>: the image's ENTRYPOINT and CMD in the background as the non-root user.
start() {
  local log=$1
  shift
  (cd "$work" && exec "${run_as[@]}" env -i PATH="$work/usr/local/bin:/usr/bin:/bin" NODE_ENV=production "$@" "${entrypoint[@]}" "${command[@]}" >"$log" 2>&1) &
  pids+=($!)
}
# stop <pid>: SIGTERM to the server (under runuser, its child), as a runtime stops a container.
stop() { pkill -TERM -P "$1" 2>/dev/null || kill -TERM "$1"; }
# healthy <port>: the HEALTHCHECK command, as the container runtime runs it, until it passes (120 s).
healthy() {
  for _ in $(seq 240); do
    if "${run_as[@]}" env SVC_PORT="$1" "${healthcheck[@]}"; then return 0; fi
    sleep 0.5
  done
  return 1
}

step "start as $user on the embedded database in the data directory, probe the healthcheck"
port=$(free_port)
start "$work/embedded.log" SVC_HOST=127.0.0.1 SVC_PORT="$port" SVC_DATA_DIR="$work/data"
embedded_pid=${pids[-1]}
healthy "$port" || {
  cat "$work/embedded.log"
  fail 'the healthcheck never passed on the embedded database'
}
serving_uid=$(stat -c %u "$work/data/operator-token")
[ "$serving_uid" -ne 0 ] || fail 'the server wrote its data directory as root'
[ "$serving_uid" = "$(id -u "$user")" ] || fail "the data directory belongs to uid $serving_uid, not $user"
[ "$(stat -c %a "$work/data/operator-token")" = 600 ] || fail 'operator-token is not mode 0600'
grep -q '"svc listening"' "$work/embedded.log" || fail 'no listening line'
step "SIGTERM drains: the healthcheck fails once the server stops"
stop "$embedded_pid"
wait "$embedded_pid" || fail "the server did not exit 0 on SIGTERM: $(tail -n 3 "$work/embedded.log")"
grep -q 'stopped cleanly' "$work/embedded.log" || fail 'no clean stop'
if SVC_PORT="$port" "${healthcheck[@]}"; then fail 'the healthcheck passed after the server stopped'; fi

step "two replicas on one PostgreSQL, started at once with the production settings"
pg_isready -d "$admin_url" >/dev/null || fail "PostgreSQL is not reachable at $admin_url (IMAGE_STEPS_DATABASE_URL)"
database=svc_image_steps_$$
psql "$admin_url" -qc "CREATE DATABASE $database" >/dev/null
database_url=${admin_url%/*}/$database
public_host=svc.example.test
signing_secret=$(head -c 32 /dev/urandom | base64 | tr -d '\n')
operator_token=$(head -c 24 /dev/urandom | base64 | tr -d '\n/+=')
p1=$(free_port)
p2=$(free_port)
tls_port=$(free_port)
for replica in 1 2; do
  replica_port=$p1
  [ "$replica" = 2 ] && replica_port=$p2
  mkdir -p "$work/replica-$replica"
  chown "$user" "$work/replica-$replica"
  start "$work/replica-$replica.log" SVC_HOST=127.0.0.1 SVC_PORT="$replica_port" SVC_DATA_DIR="$work/replica-$replica" \
    DATABASE_URL="$database_url" SVC_PUBLIC_URL="https://$public_host:$tls_port" SVC_SIGNING_SECRET="$signing_secret" \
    SVC_OPERATOR_TOKEN="$operator_token" SVC_TRUST_PROXY=true SVC_STORAGE=local SVC_LOG_LEVEL=info
done
healthy "$p1" || fail "replica 1 never became healthy: $(tail -n 5 "$work/replica-1.log")"
healthy "$p2" || fail "replica 2 never became healthy: $(tail -n 5 "$work/replica-2.log")"
migrations=$(psql "$database_url" -tAc 'SELECT count(*) FROM svc_migrations')
applied=$(cat "$work/replica-1.log" "$work/replica-2.log" | grep -c '"migration applied"' || true)
[ "$migrations" -gt 0 ] && [ "$applied" = "$migrations" ] || fail "$migrations migrations recorded, $applied applied by the two replicas (each exactly once expected)"
echo "$migrations migrations, each applied once by one of the two replicas"

step "rolling back: an older version starts on a database a newer one migrated"
# A newer version's migration, as the database has it after an upgrade: this version's replicas
# (the "older" ones now) keep starting, since they look only for their own migrations.
psql "$database_url" -qc "INSERT INTO svc_migrations (name) VALUES ('99991231T0000-from-a-newer-version')"
replica_2_pid=${pids[-1]}
stop "$replica_2_pid"
wait "$replica_2_pid" || fail 'replica 2 did not stop cleanly'
start "$work/replica-2-again.log" SVC_HOST=127.0.0.1 SVC_PORT="$p2" SVC_DATA_DIR="$work/replica-2" \
  DATABASE_URL="$database_url" SVC_PUBLIC_URL="https://$public_host:$tls_port" SVC_SIGNING_SECRET="$signing_secret" \
  SVC_OPERATOR_TOKEN="$operator_token" SVC_TRUST_PROXY=true SVC_STORAGE=local SVC_LOG_LEVEL=info
healthy "$p2" || fail "replica 2 did not start again beside a newer migration: $(tail -n 5 "$work/replica-2-again.log")"
! grep -q '"migration applied"' "$work/replica-2-again.log" || fail 'the restarted replica applied a migration'

step "Debian's nginx with deploy/nginx.conf in front of both, TLS terminated there"
command -v nginx >/dev/null || fail 'nginx is not installed (apt-get install nginx-light)'
mkdir -p "$work/nginx/logs" "$work/nginx/tmp"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=$public_host" -addext "subjectAltName=DNS:$public_host" \
  -keyout "$work/nginx/privkey.pem" -out "$work/nginx/fullchain.pem" >/dev/null 2>&1
sed -e "s|127.0.0.1:8787|127.0.0.1:$p1|; s|127.0.0.1:8788|127.0.0.1:$p2|; s|listen 443 ssl;|listen 127.0.0.1:$tls_port ssl;|" \
  -e "s|svc.example.com|$public_host|; s|/etc/ssl/svc/|$work/nginx/|g" deploy/nginx.conf >"$work/nginx/svc.conf"
cat >"$work/nginx/nginx.conf" <<CONF
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/logs/error.log;
events {}
http {
  access_log $work/nginx/logs/access.log;
  client_body_temp_path $work/nginx/tmp/body;
  proxy_temp_path $work/nginx/tmp/proxy;
  include $work/nginx/svc.conf;
}
CONF
nginx -t -c "$work/nginx/nginx.conf" -p "$work/nginx" >/dev/null 2>&1 || nginx -t -c "$work/nginx/nginx.conf" -p "$work/nginx"
nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" 2>>"$work/nginx/logs/error.log" &
pids+=($!)
https() { curl -sS --fail-with-body --cacert "$work/nginx/fullchain.pem" --resolve "$public_host:$tls_port:127.0.0.1" "$@"; }
for _ in $(seq 40); do https -o /dev/null "https://$public_host:$tls_port/readyz" 2>/dev/null && break || sleep 0.25; done
https "https://$public_host:$tls_port/readyz" >/dev/null || fail 'readyz through nginx'
issuer=$(https "https://$public_host:$tls_port/.well-known/oauth-authorization-server" | "$node24" -e "console.log(JSON.parse(require('node:fs').readFileSync(0,'utf8')).issuer)")
[ "$issuer" = "https://$public_host:$tls_port" ] || fail "the OAuth issuer behind the proxy is $issuer, not the public URL"
whoami=$(https -H "authorization: Bearer $operator_token" "https://$public_host:$tls_port/v1/whoami")
grep -q operator <<<"$whoami" || fail "the operator token through the proxy: $whoami"
status=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$work/nginx/fullchain.pem" --resolve "$public_host:$tls_port:127.0.0.1" -H 'authorization: Bearer not-the-token-at-all' "https://$public_host:$tls_port/v1/whoami")
[ "$status" = 401 ] || fail "a wrong token through the proxy answered $status, not 401"
echo "issuer $issuer; operator token accepted, a wrong one refused (401)"

step "systemd-analyze verify deploy/svc.service (Node's path as installed here)"
sed -e "s|/usr/local/bin/node|$work/usr/local/bin/node|; s|/opt/svc/|$work/opt/svc/|; s|^EnvironmentFile=.*|EnvironmentFile=-$work/svc.env|" deploy/svc.service >"$work/svc.service"
systemd-analyze verify "$work/svc.service" || fail 'systemd-analyze verify'

step "all steps passed"
