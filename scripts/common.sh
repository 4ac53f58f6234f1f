# Shared by scripts/run.sh and scripts/cluster.sh (sourced, not run).

# secret NAME FILE [BYTES]: export NAME from the environment, else from FILE, which is created once with random
# letters and digits and kept private (0600), so that restarts keep tokens and widget sessions valid.
secret() {
  local name=$1 file=$2 bytes=${3:-24}
  if [ -z "${!name:-}" ]; then
    [ -s "$file" ] || (umask 077; head -c "$bytes" /dev/urandom | base64 | tr -dc 'A-Za-z0-9' > "$file")
    printf -v "$name" '%s' "$(cat "$file")"
  fi
  export "${name?}"
}

# start_supervisord CONF: run supervisord with CONF in the background (SUPERVISOR = its pid) and stop it, and so
# every server it supervises, on Ctrl-C, TERM, a closed terminal (HUP) or when the calling script exits. supervisord
# runs in a session of its own (a closed terminal's HUP would make it restart every server) and gets SIGTERM when
# this script dies, however it dies (bot/launcher.py: PR_SET_PDEATHSIG).
start_supervisord() {
  setsid "$BIN/python" -m bot.launcher exec -- "$BIN/supervisord" -c "$1" &
  SUPERVISOR=$!
  trap _stop_supervisord INT TERM HUP EXIT
}

_stop_supervisord() {
  trap - INT TERM HUP EXIT
  kill -TERM "$SUPERVISOR" 2>/dev/null || true   # supervisord stops every server, then exits
  wait "$SUPERVISOR" 2>/dev/null || true
  echo "stopped."
  exit 0
}
