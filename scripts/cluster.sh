#!/usr/bin/env bash
# Starts the cluster: two Rasa instances and two action servers behind HAProxy, PostgreSQL tracker store and
# tickets, Redis locks / socket.io rooms / Telegram de-duplication, website and staff page, all under supervisord
# (a crashed server is restarted). Foreground like `make run`: Ctrl-C stops all of it. Called by `make cluster`.
#
# Everything can be changed by environment (defaults in brackets):
#   BALANCER_PORT [5000]  RASA_A_PORT [5005]  RASA_B_PORT [5006]  ACTIONS_A_PORT [5055]  ACTIONS_B_PORT [5056]
#   ACTIONS_BALANCER_PORT [5050]  WEB_PORT [8080]  STAFF_PORT [8081]  BALANCER_BIND [127.0.0.1]
#   TRACKER_DB_HOST [127.0.0.1] TRACKER_DB_NAME [gpuadvisor] TRACKER_DB_USER [postgres] TRACKER_DB_PASSWORD []
#   REDIS_HOST [127.0.0.1]  REDIS_PORT [6379]  REDIS_KEY_PREFIX [gpuadvisor]
#   REDIS_USERNAME [advisor-<prefix>] REDIS_PASSWORD [generated into var/redis-password]: the cluster's own Redis ACL
#   user, created at start (bot/assistant/redis_account.py) by REDIS_ADMIN_USERNAME/REDIS_ADMIN_PASSWORD [default user]
#   ADVISOR_CLUSTER_DIR [var/cluster] (logs, spools, sockets)  ADVISOR_MODEL [models/gpu-advisor.tar.gz]
#   RASA_TOKEN, STAFF_TOKEN, ACTION_SERVER_TOKEN, SOCKET_SESSION_SECRET: generated into var/ as for `make run`.
set -euo pipefail
export RASA_TELEMETRY_ENABLED=false SQLALCHEMY_SILENCE_UBER_WARNING=1
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BIN=$ROOT/.venv/bin
. "$ROOT/scripts/common.sh"

export ADVISOR_ROOT=$ROOT
export BALANCER_BIND=${BALANCER_BIND:-127.0.0.1} BALANCER_PORT=${BALANCER_PORT:-5000}
export RASA_A_PORT=${RASA_A_PORT:-5005} RASA_B_PORT=${RASA_B_PORT:-5006}
export ACTIONS_A_PORT=${ACTIONS_A_PORT:-5055} ACTIONS_B_PORT=${ACTIONS_B_PORT:-5056}
export ACTIONS_BALANCER_PORT=${ACTIONS_BALANCER_PORT:-5050} WEB_PORT=${WEB_PORT:-8080} STAFF_PORT=${STAFF_PORT:-8081}
export TRACKER_DB_HOST=${TRACKER_DB_HOST:-127.0.0.1} TRACKER_DB_NAME=${TRACKER_DB_NAME:-gpuadvisor}
export TRACKER_DB_USER=${TRACKER_DB_USER:-postgres} TRACKER_DB_PASSWORD=${TRACKER_DB_PASSWORD:-}
export REDIS_HOST=${REDIS_HOST:-127.0.0.1} REDIS_PORT=${REDIS_PORT:-6379} REDIS_KEY_PREFIX=${REDIS_KEY_PREFIX:-gpuadvisor}
CLUSTER_DIR=${ADVISOR_CLUSTER_DIR:-var/cluster}
mkdir -p "$CLUSTER_DIR" var/charts
CLUSTER_DIR=$(cd "$CLUSTER_DIR" && pwd)
export ADVISOR_RUN_DIR=$CLUSTER_DIR/run ADVISOR_LOG_DIR=$CLUSTER_DIR/log ADVISOR_SPOOL_ROOT=$CLUSTER_DIR/spool
mkdir -p "$ADVISOR_RUN_DIR" "$ADVISOR_LOG_DIR" "$ADVISOR_SPOOL_ROOT"
export ADVISOR_MODEL=${ADVISOR_MODEL:-$ROOT/models/gpu-advisor.tar.gz}
export ADVISOR_ENDPOINTS=${ADVISOR_ENDPOINTS:-$ROOT/endpoints.production.yml}
# Both action servers write charts into one folder; the website serves it, also through the balancer (/charts/).
export ADVISOR_CHART_DIR=${ADVISOR_CHART_DIR:-$ROOT/var/charts}
export ADVISOR_PUBLIC_URL=${ADVISOR_PUBLIC_URL:-http://localhost:$WEB_PORT}
export ADVISOR_SOCKET_URL=${ADVISOR_SOCKET_URL:-http://localhost:$BALANCER_PORT}   # the widget connects through HAProxy
export ACTION_SERVER_URL=${ACTION_SERVER_URL:-http://127.0.0.1:$ACTIONS_BALANCER_PORT/webhook}
export RASA_URL=${RASA_URL:-http://127.0.0.1:$BALANCER_PORT}   # staff replies go in through any instance
# HAProxy appends the client's address to X-Forwarded-For: the rate limits per address read it from there.
export ADVISOR_TRUSTED_PROXY=${ADVISOR_TRUSTED_PROXY:-1}
DB_URL="postgresql://$TRACKER_DB_USER${TRACKER_DB_PASSWORD:+:$TRACKER_DB_PASSWORD}@$TRACKER_DB_HOST:5432/$TRACKER_DB_NAME"
export TICKETS_DB_URL=${TICKETS_DB_URL:-$DB_URL}

secret RASA_TOKEN var/rasa-token
secret STAFF_TOKEN var/staff-token
secret ACTION_SERVER_TOKEN var/action-token
secret SOCKET_SESSION_SECRET var/socket-secret   # one secret for both instances: a widget session is valid on either
# The cluster signs in to Redis as its own ACL user, limited to its keys and its socket.io channel.
export REDIS_USERNAME=${REDIS_USERNAME:-advisor-$REDIS_KEY_PREFIX}
secret REDIS_PASSWORD var/redis-password 32

export ADVISOR_CREDENTIALS=$ROOT/credentials.yml
if [ -n "${TELEGRAM_TOKEN:-}" ]; then
  export ADVISOR_CREDENTIALS=$ROOT/credentials.telegram.yml
  : "${TELEGRAM_SECRET_TOKEN:?set TELEGRAM_SECRET_TOKEN too (the webhook secret Telegram sends back)}"
fi

# ---- what the cluster needs from this machine: say exactly what is missing ----
missing=()
command -v haproxy >/dev/null 2>&1 || missing+=("haproxy is not installed (Debian: apt-get install haproxy; 'make cluster' does it as root)")
[ -x "$BIN/supervisord" ] || missing+=("supervisord is not in $BIN (run 'make setup')")
[ -f "$ADVISOR_MODEL" ] || missing+=("no trained model at $ADVISOR_MODEL (run 'make model')")
if ! $BIN/python - "$DB_URL" <<'PY' 2>/dev/null
import sys, psycopg2
url = sys.argv[1]
base, name = url.rsplit("/", 1)
try:
    psycopg2.connect(url, connect_timeout=3).close()
except psycopg2.OperationalError as error:
    if f'database "{name}" does not exist' not in str(error):
        raise
    admin = psycopg2.connect(base + "/postgres", connect_timeout=3)
    admin.autocommit = True
    admin.cursor().execute(f'CREATE DATABASE "{name}"')
    admin.close()
    print(f"created PostgreSQL database {name}", file=sys.stderr)
PY
then
  missing+=("PostgreSQL does not answer at $TRACKER_DB_HOST:5432 as user $TRACKER_DB_USER (database $TRACKER_DB_NAME; set TRACKER_DB_* or start PostgreSQL)")
fi
if ! redis_problem=$($BIN/python -m bot.assistant.redis_account provision 2>&1); then
  missing+=("Redis at $REDIS_HOST:$REDIS_PORT: ${redis_problem:-no answer} (set REDIS_HOST/REDIS_PORT or start redis-server)")
elif [ -n "$redis_problem" ]; then
  echo "$redis_problem" >&2   # the warning that Redis's default user has no password
fi
for port in "$BALANCER_PORT" "$RASA_A_PORT" "$RASA_B_PORT" "$ACTIONS_A_PORT" "$ACTIONS_B_PORT" "$ACTIONS_BALANCER_PORT" "$WEB_PORT" "$STAFF_PORT"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then missing+=("port $port is already in use (is 'make run' or another cluster running?)"); fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "The cluster cannot start:" >&2
  printf '  - %s\n' "${missing[@]}" >&2
  exit 1
fi

CONF=$ROOT/deploy/supervisor/cluster.conf
start_supervisord "$CONF"

echo "Starting the cluster… (logs in $ADVISOR_LOG_DIR/)"
ready=0
for _ in $(seq 1 240); do
  if curl -sf "http://127.0.0.1:$RASA_A_PORT/health" >/dev/null 2>&1 && curl -sf "http://127.0.0.1:$RASA_B_PORT/health" >/dev/null 2>&1 \
     && curl -sf "http://127.0.0.1:$BALANCER_PORT/health" >/dev/null 2>&1; then ready=1; break; fi
  kill -0 "$SUPERVISOR" 2>/dev/null || { echo "supervisord exited; see $ADVISOR_LOG_DIR/supervisord.log" >&2; exit 1; }
  sleep 1
done
[ $ready = 1 ] || echo "warning: not every server answers yet; see $ADVISOR_LOG_DIR/" >&2
cat <<MSG

  GPU fine-tuning advisor cluster is running (2 Rasa instances, 2 action servers, HAProxy).
  Balancer:      http://localhost:$BALANCER_PORT   REST /webhooks/rest/webhook, socket.io, Telegram /webhooks/telegram/webhook
  Health:        http://localhost:$BALANCER_PORT/health   (per instance: :$RASA_A_PORT/health :$RASA_B_PORT/health,
                 action servers :$ACTIONS_A_PORT/health :$ACTIONS_B_PORT/health, website :$WEB_PORT/health, staff :$STAFF_PORT/health)
  Chat page:     http://localhost:$WEB_PORT/   (widget connected through the balancer)
  Staff page:    http://localhost:$STAFF_PORT/   (token in var/staff-token)
  Supervision:   $BIN/supervisorctl -s unix://$ADVISOR_RUN_DIR/supervisor.sock status   (restart rasa-a, stop actions-b, …)
  Press Ctrl-C to stop.
MSG
wait "$SUPERVISOR"
