#!/usr/bin/env bash
# Starts the whole product: action server, Rasa (REST + socket.io [+ Telegram]), website widget, staff page.
# Ctrl-C stops everything. Called by `make run` after the model has been trained.
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

export ADVISOR_PUBLIC_URL=${ADVISOR_PUBLIC_URL:-http://localhost:8080}
export ADVISOR_CHART_DIR=${ADVISOR_CHART_DIR:-var/charts}
export RASA_URL=${RASA_URL:-http://127.0.0.1:5005}
export ACTION_SERVER_URL=${ACTION_SERVER_URL:-http://127.0.0.1:5055/webhook}  # endpoints.production.yml
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
mkdir -p var/run
export ADVISOR_ROOT=$(pwd) ADVISOR_RUN_DIR=$(pwd)/var/run ADVISOR_LOG_DIR=$(pwd)/var/log
export ADVISOR_MODEL=${ADVISOR_MODEL:-$(pwd)/models/gpu-advisor.tar.gz}
export ADVISOR_CREDENTIALS=$(pwd)/$CREDENTIALS ADVISOR_ENDPOINTS=$(pwd)/${RASA_ENDPOINTS:-endpoints.yml}
start_supervisord deploy/supervisor/run.conf

echo "Starting… (logs in var/log/)"
for _ in $(seq 1 120); do
  # The URL goes to curl on stdin (printf is a shell builtin): a token in curl's arguments would show in `ps`.
  printf 'url = "http://127.0.0.1:5005/status?token=%s"\n' "$RASA_TOKEN" | curl -sf -K - 2>/dev/null | grep -q model_file && break
  sleep 1
done
cat <<MSG

  GPU fine-tuning advisor is running.
  Chat page (website widget):  http://localhost:8080/
  REST:                        POST http://localhost:5005/webhooks/rest/webhook  {"sender": "me", "message": "سلام"}
  Staff page:                  http://localhost:8081/   (token in var/staff-token or \$STAFF_TOKEN)
  Telegram:                    $([ -n "${TELEGRAM_TOKEN:-}" ] && echo "enabled at /webhooks/telegram/webhook (register: .venv/bin/gpu-advisor telegram set-webhook)" || echo "off (set TELEGRAM_TOKEN, TELEGRAM_SECRET_TOKEN, TELEGRAM_WEBHOOK_URL)")
  Supervision:                 $BIN/supervisorctl -s unix://var/run/supervisor.sock status   (a crashed server is restarted)
  Press Ctrl-C to stop.
MSG
wait "$SUPERVISOR"
