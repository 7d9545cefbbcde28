# Shared by the test-server scripts (ferretdb.sh, kafka.sh, minio.sh): logging, the Go
# toolchain, port and pid checks, and stopping. Each script sets, before sourcing this:
#   SERVER_LABEL   how logs name the server ("FerretDB")
#   SERVER_TAG     the log prefix ("ferretdb")
#   PORT, PID_FILE, LOG_FILE
#   PROCESS_MATCH  a string the server's command line contains (guards against recycled pids)

log() { printf '%s: %s\n' "$SERVER_TAG" "$*" >&2; }
die() { printf '%s: ERROR: %s\n' "$SERVER_TAG" "$*" >&2; exit 1; }

find_go() {
  if command -v go >/dev/null 2>&1; then command -v go; return; fi
  if [ -x /usr/local/go/bin/go ]; then echo /usr/local/go/bin/go; return; fi
  die "the Go toolchain (go >= 1.24) is needed to build $SERVER_LABEL; install it or put it on PATH"
}

# True when something accepts TCP connections on 127.0.0.1:$1 (default $PORT).
port_open() { (exec 4<>"/dev/tcp/127.0.0.1/${1:-$PORT}") 2>/dev/null; }

# Prints the pid from the pid file when that process is alive and is our server.
running_pid() {
  [ -f "$PID_FILE" ] || return 1
  local pid
  pid=$(cat "$PID_FILE" 2>/dev/null) || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  # Guard against a recycled pid.
  if [ -r "/proc/$pid/cmdline" ]; then
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$PROCESS_MATCH" || return 1
  fi
  echo "$pid"
}

# fail_with_log MESSAGE [LINES]: the message, the tail of the server's log, exit 1.
fail_with_log() {
  log "$1"
  if [ -f "$LOG_FILE" ]; then
    log "last lines of $LOG_FILE:"
    tail -n "${2:-40}" "$LOG_FILE" >&2 || true
  fi
  exit 1
}

# stop_server GRACE_SECONDS: SIGTERM, up to GRACE_SECONDS to exit, then SIGKILL.
stop_server() {
  local grace=$1 pid i
  if ! pid=$(running_pid); then
    rm -f "$PID_FILE"
    log "not running on 127.0.0.1:$PORT (no live pid in $PID_FILE)"
    return 0
  fi
  log "stopping $SERVER_LABEL (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 $((grace * 5))); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "still alive after ${grace}s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    # Gone before "stopped": a start right after must not find the old process still holding
    # its data files (FerretDB's SQLite databases) or its port.
    for i in $(seq 1 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
  fi
  rm -f "$PID_FILE"
  log "stopped"
}

# status_server PRINT: logs the state; when running, PRINT writes the connection line.
status_server() {
  local pid
  if pid=$(running_pid) && port_open; then
    log "running (pid $pid) on 127.0.0.1:$PORT"
    "$1"
  else
    log "not running on 127.0.0.1:$PORT"
    return 1
  fi
}
