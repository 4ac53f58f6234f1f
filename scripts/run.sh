#!/usr/bin/env bash
# Starts the whole product: action server, Rasa (REST + socket.io [+ Telegram]), website widget, staff page.
# Ctrl-C stops everything. Called by `make run` after the model has been trained.
set -euo pipefail
export RASA_TELEMETRY_ENABLED=false
cd "$(dirname "$0")/.."
BIN=.venv/bin
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
if [ -z "${RASA_TOKEN:-}" ]; then
  [ -s var/rasa-token ] || head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' > var/rasa-token
  RASA_TOKEN=$(cat var/rasa-token)
fi
export RASA_TOKEN
if [ -z "${STAFF_TOKEN:-}" ]; then
  [ -s var/staff-token ] || head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' > var/staff-token
  STAFF_TOKEN=$(cat var/staff-token)
fi
export STAFF_TOKEN
# Shared secret between Rasa and the action server (endpoints.yml sends it, bot/assistant/action_server.py checks it).
if [ -z "${ACTION_SERVER_TOKEN:-}" ]; then
  [ -s var/action-token ] || head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' > var/action-token
  ACTION_SERVER_TOKEN=$(cat var/action-token)
fi
export ACTION_SERVER_TOKEN
# Signs the website's socket.io sessions (bot/assistant/channels/socketio_sessions.py); kept so that a restart keeps them.
if [ -z "${SOCKET_SESSION_SECRET:-}" ]; then
  [ -s var/socket-secret ] || head -c 32 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' > var/socket-secret
  SOCKET_SESSION_SECRET=$(cat var/socket-secret)
fi
export SOCKET_SESSION_SECRET

CREDENTIALS=credentials.yml
if [ -n "${TELEGRAM_TOKEN:-}" ]; then
  CREDENTIALS=credentials.telegram.yml
  : "${TELEGRAM_SECRET_TOKEN:?set TELEGRAM_SECRET_TOKEN too (the webhook secret Telegram sends back)}"
fi

pids=()
cleanup() { trap - INT TERM EXIT; kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; echo "stopped."; exit 0; }
trap cleanup INT TERM EXIT

$BIN/python -m bot.assistant.action_server --port 5055 >var/log/actions.log 2>&1 & pids+=($!)
# bot.assistant.rasa_server is `rasa run` taking RASA_TOKEN from the environment (never on the command line, where
# `ps` shows it) and CORS from ADVISOR_ALLOWED_ORIGINS (default: the chat page's own origin).
$BIN/python -m bot.assistant.rasa_server run --model models/gpu-advisor.tar.gz --port 5005 --credentials "$CREDENTIALS" \
  --endpoints "${RASA_ENDPOINTS:-endpoints.yml}" --enable-api >var/log/rasa.log 2>&1 & pids+=($!)
$BIN/python -m bot.website --port 8080 >var/log/webapp.log 2>&1 & pids+=($!)
$BIN/python -m bot.staff --port 8081 >var/log/staff.log 2>&1 & pids+=($!)

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
  Press Ctrl-C to stop.
MSG
wait -n "${pids[@]}" || true
echo "a server exited; see var/log/" >&2
exit 1
