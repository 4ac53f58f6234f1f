#!/usr/bin/env bash
# Starts the whole product: action server, Rasa (REST + socket.io [+ Telegram]), website widget, staff page.
# Ctrl-C stops everything. Called by `make run` after the model has been trained.
# Ports (defaults): RASA_PORT 5005, ACTIONS_PORT 5055, WEB_PORT 8080, STAFF_PORT 8081. Every server dies with
# supervisord, and supervisord with this script (bot/launcher.py); servers an earlier run left behind on these ports
# are stopped first, and a port held by another program is named before anything starts.
set -euo pipefail
export RASA_TELEMETRY_ENABLED=false
cd "$(dirname "$0")/.."
BIN=.venv/bin
. scripts/common.sh
# Secrets, databases and logs are for this account only (security review finding 13): new files 0600, and files
# left by an older version are tightened.
umask 077
mkdir -p var/charts var/log
chmod 700 var 2>/dev/null || true
find var -maxdepth 2 -type f \( -name '*-token' -o -name '*-secret' -o -name '*.db' -o -name '*.log' \) \
  -exec chmod 600 {} + 2>/dev/null || true

export RASA_PORT=${RASA_PORT:-5005} ACTIONS_PORT=${ACTIONS_PORT:-5055} WEB_PORT=${WEB_PORT:-8080} STAFF_PORT=${STAFF_PORT:-8081}
export ADVISOR_PUBLIC_URL=${ADVISOR_PUBLIC_URL:-http://localhost:$WEB_PORT}
export ADVISOR_CHART_DIR=${ADVISOR_CHART_DIR:-var/charts}
export RASA_URL=${RASA_URL:-http://127.0.0.1:$RASA_PORT}
export ACTION_SERVER_URL=${ACTION_SERVER_URL:-http://127.0.0.1:$ACTIONS_PORT/webhook}  # endpoints.production.yml
[ "$RASA_PORT" = 5005 ] || export ADVISOR_SOCKET_URL=${ADVISOR_SOCKET_URL:-http://localhost:$RASA_PORT}
# The Rasa HTTP API is token-protected; the staff page uses the same token to push staff replies.
secret RASA_TOKEN var/rasa-token
secret STAFF_TOKEN var/staff-token
# Shared secret between Rasa and the action server (endpoints.yml sends it, bot/assistant/action_server.py checks it).
secret ACTION_SERVER_TOKEN var/action-token
# Signs the website's socket.io sessions (bot/assistant/channels/socketio_sessions.py); kept so that a restart keeps them.
secret SOCKET_SESSION_SECRET var/socket-secret 32

CREDENTIALS=credentials.yml
if [ -n "${TELEGRAM_TOKEN:-}" ]; then
  CREDENTIALS=credentials.telegram.yml
  : "${TELEGRAM_SECRET_TOKEN:?set TELEGRAM_SECRET_TOKEN too (the webhook secret Telegram sends back)}"
fi

# The servers run under supervisord (deploy/supervisor/run.conf): one that crashes is restarted, the others keep
# serving. Ctrl-C stops supervisord, which stops all of them.
export ADVISOR_ROOT=$(pwd)
export ADVISOR_RUN_DIR=${ADVISOR_RUN_DIR:-$(pwd)/var/run} ADVISOR_LOG_DIR=${ADVISOR_LOG_DIR:-$(pwd)/var/log}
mkdir -p "$ADVISOR_RUN_DIR" "$ADVISOR_LOG_DIR"
export ADVISOR_MODEL=${ADVISOR_MODEL:-$(pwd)/models/gpu-advisor.tar.gz}
ENDPOINTS=${RASA_ENDPOINTS:-endpoints.yml}
case $ENDPOINTS in /*) ;; *) ENDPOINTS=$(pwd)/$ENDPOINTS ;; esac
if [ -z "${RASA_ENDPOINTS:-}" ] && [ "$ACTIONS_PORT" != 5055 ]; then   # endpoints.yml names the default port
  sed "s#http://127.0.0.1:5055/webhook#http://127.0.0.1:$ACTIONS_PORT/webhook#" endpoints.yml > "$ADVISOR_RUN_DIR/endpoints.yml"
  ENDPOINTS=$ADVISOR_RUN_DIR/endpoints.yml
fi
export ADVISOR_CREDENTIALS=$(pwd)/$CREDENTIALS ADVISOR_ENDPOINTS=$ENDPOINTS

# A `make run` of this checkout that is still running is not a ghost: say so rather than stop it.
if [ -s "$ADVISOR_RUN_DIR/supervisord.pid" ]; then
  running=$(cat "$ADVISOR_RUN_DIR/supervisord.pid")
  if [ "$(readlink "/proc/$running/cwd" 2>/dev/null)" = "$(pwd -P)" ] && grep -qa supervisord "/proc/$running/cmdline" 2>/dev/null; then
    echo "make run is already running here (supervisord pid $running): use it, or stop it (Ctrl-C where it runs, or kill $running)." >&2
    exit 1
  fi
fi
# Servers an earlier run left behind (its supervisor killed) are stopped; a port held by anything else is named.
$BIN/python -m bot.launcher free-ports "$RASA_PORT" "$ACTIONS_PORT" "$WEB_PORT" "$STAFF_PORT" || exit 1
start_supervisord deploy/supervisor/run.conf

echo "Starting… (logs in $ADVISOR_LOG_DIR/)"
for _ in $(seq 1 120); do
  # The URL goes to curl on stdin (printf is a shell builtin): a token in curl's arguments would show in `ps`.
  printf 'url = "http://127.0.0.1:%s/status?token=%s"\n' "$RASA_PORT" "$RASA_TOKEN" | curl -sf -K - 2>/dev/null | grep -q model_file && break
  kill -0 "$SUPERVISOR" 2>/dev/null || { echo "supervisord exited; see $ADVISOR_LOG_DIR/supervisord.log" >&2; exit 1; }
  sleep 1
done
cat <<MSG

  GPU fine-tuning advisor is running.
  Chat page (website widget):  http://localhost:$WEB_PORT/
  REST:                        POST http://localhost:$RASA_PORT/webhooks/rest/webhook  {"sender": "me", "message": "سلام"}
  Staff page:                  http://localhost:$STAFF_PORT/   (token in var/staff-token or \$STAFF_TOKEN)
  Telegram:                    $([ -n "${TELEGRAM_TOKEN:-}" ] && echo "enabled at /webhooks/telegram/webhook (register: .venv/bin/gpu-advisor telegram set-webhook)" || echo "off (set TELEGRAM_TOKEN, TELEGRAM_SECRET_TOKEN, TELEGRAM_WEBHOOK_URL)")
  Supervision:                 $BIN/supervisorctl -s unix://$ADVISOR_RUN_DIR/supervisor.sock status   (a crashed server is restarted)
  Press Ctrl-C to stop.
MSG
wait "$SUPERVISOR"
