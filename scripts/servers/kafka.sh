#!/usr/bin/env bash
# Apache Kafka 3.9.1 (single-node KRaft: one process is broker and controller) as the test server
# for the analytics forwarder. No Docker and no internet here except the package registries, so
# the broker's jars come from Maven Central (`mvn dependency:copy-dependencies` on
# scripts/servers/kafka-pom.xml) and run as `java -cp 'libs/*' kafka.Kafka server.properties`.
#
#   bash scripts/servers/kafka.sh install            # copy the jars once into $SERVERS_DIR/kafka/libs
#   eval "$(bash scripts/servers/kafka.sh start)"    # sets KAFKA_BROKERS=127.0.0.1:PORT
#   bash scripts/servers/kafka.sh status
#   bash scripts/servers/kafka.sh stop
#
# `start` prints exactly one line to stdout (KAFKA_BROKERS=...); everything else goes to stderr.
# It is idempotent: a broker already running on the port from this servers dir is reused.
# Timings measured on 2 cores: install 25-40 s with an empty ~/.m2 (46 MB, 57 jars), 2-6 s when
# ~/.m2 has them, nothing when the libs are there; start 3-6 s (storage format on first start,
# JVM boot, broker unfenced); stop ~2 s (controlled shutdown).
#
# Environment:
#   SERVERS_DIR                 cache and state root (default: <repo>/.ci/servers)
#   KAFKA_PORT                  client listener on 127.0.0.1 (default: 19092)
#   KAFKA_CONTROLLER_PORT       KRaft controller listener on 127.0.0.1 (default: KAFKA_PORT + 1)
#   KAFKA_HEAP_OPTS             JVM heap flags (default: -Xms256m -Xmx512m)
#   KAFKA_START_TIMEOUT         seconds to wait for the broker to be ready (default: 90)
#   JAVA                        java binary (default: java on PATH; Java 11+ needed, 17 here)
set -euo pipefail

# All chatter goes to stderr; fd 3 is the real stdout, used only for the KAFKA_BROKERS line.
exec 3>&1 1>&2

KAFKA_VERSION=3.9.1
SLF4J_BINDING_VERSION=1.7.36
DEPENDENCY_PLUGIN=org.apache.maven.plugins:maven-dependency-plugin:3.6.1

REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
POM=$REPO_DIR/scripts/servers/kafka-pom.xml
SERVERS_DIR=${SERVERS_DIR:-$REPO_DIR/.ci/servers}
PORT=${KAFKA_PORT:-19092}
CONTROLLER_PORT=${KAFKA_CONTROLLER_PORT:-$((PORT + 1))}
HEAP_OPTS=${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}
START_TIMEOUT=${KAFKA_START_TIMEOUT:-90}

KAFKA_HOME=$SERVERS_DIR/kafka
LIBS_DIR=$KAFKA_HOME/libs
INSTALLED_STAMP=$KAFKA_HOME/.installed
STAMP_CONTENT="kafka_2.13:$KAFKA_VERSION slf4j-reload4j:$SLF4J_BINDING_VERSION"
# State is per port, so two brokers on different ports share no data, logs or pid files.
STATE_ROOT=$SERVERS_DIR/kafka-$PORT
DATA_DIR=$STATE_ROOT/data
CONFIG=$STATE_ROOT/server.properties
LOG4J_CONFIG=$STATE_ROOT/log4j.properties
LOG_FILE=$STATE_ROOT/kafka.log
PID_FILE=$STATE_ROOT/kafka.pid
SERVER_LABEL=Kafka
SERVER_TAG=kafka
PROCESS_MATCH="kafka.Kafka $CONFIG"
# shellcheck source=scripts/servers/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# Byte offset of the current run's first line in LOG_FILE: readiness is looked for after it.
LOG_OFFSET_FILE=$STATE_ROOT/kafka.log.offset
READY_MESSAGE='Kafka Server started'


find_java() {
  if [ -n "${JAVA:-}" ]; then echo "$JAVA"; return; fi
  if command -v java >/dev/null 2>&1; then command -v java; return; fi
  if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then echo "$JAVA_HOME/bin/java"; return; fi
  die "a Java runtime (11+) is needed to run Kafka; install one (apt-get install openjdk-17-jre-headless) or set JAVA"
}

is_installed() {
  [ -f "$INSTALLED_STAMP" ] && [ "$(cat "$INSTALLED_STAMP")" = "$STAMP_CONTENT" ] &&
    compgen -G "$LIBS_DIR/kafka_2.13-$KAFKA_VERSION.jar" >/dev/null
}

install_kafka() {
  if is_installed; then return 0; fi
  mkdir -p "$KAFKA_HOME"
  # Serialise concurrent installs (two test runs starting at once).
  exec 9>"$SERVERS_DIR/.kafka-install.lock"
  if command -v flock >/dev/null 2>&1; then flock 9; fi
  if is_installed; then exec 9>&-; return 0; fi

  command -v mvn >/dev/null 2>&1 || die "Maven (mvn) is needed to fetch the Kafka jars from Maven Central; install it (apt-get install maven)"
  local started tmp
  started=$(date +%s)
  log "copying Kafka $KAFKA_VERSION jars from Maven Central into $LIBS_DIR (first run only)"
  tmp=$KAFKA_HOME/libs.tmp.$$
  rm -rf "$tmp"
  # Only runtime-scope jars: what the broker needs on its class path, nothing test-only.
  # Maven's output goes to a file, shown only when it fails.
  if ! mvn -B --no-transfer-progress -Dstyle.color=never -f "$POM" "$DEPENDENCY_PLUGIN:copy-dependencies" \
    -DoutputDirectory="$tmp" -DincludeScope=runtime >"$KAFKA_HOME/install.log" 2>&1; then
    tail -n 40 "$KAFKA_HOME/install.log" >&2
    rm -rf "$tmp"
    die "mvn dependency:copy-dependencies failed (is Maven Central reachable?); full output in $KAFKA_HOME/install.log"
  fi
  [ -f "$tmp/kafka_2.13-$KAFKA_VERSION.jar" ] || { rm -rf "$tmp"; die "kafka_2.13-$KAFKA_VERSION.jar missing after the copy"; }
  rm -rf "$LIBS_DIR"
  mv "$tmp" "$LIBS_DIR"
  printf '%s\n' "$STAMP_CONTENT" >"$INSTALLED_STAMP"
  log "installed $(find "$LIBS_DIR" -name '*.jar' | wc -l) jars ($(du -sh "$LIBS_DIR" | cut -f1)) in $(($(date +%s) - started))s"
  exec 9>&-
}




# The current run logged that it is up (the broker registered with the controller and unfenced).
logged_ready() {
  local offset=0
  [ -f "$LOG_OFFSET_FILE" ] && offset=$(cat "$LOG_OFFSET_FILE")
  [ -f "$LOG_FILE" ] && tail -c +"$((offset + 1))" "$LOG_FILE" | grep -q -- "$READY_MESSAGE"
}

# wait_ready PID [ours]: with "ours", a broker that misses the deadline is killed (we started it).
wait_ready() {
  local pid=$1 ours=${2:-} deadline=$(($(date +%s) + START_TIMEOUT))
  until port_open "$PORT" && logged_ready; do
    kill -0 "$pid" 2>/dev/null || { rm -f "$PID_FILE"; fail_with_log "Kafka (pid $pid) exited before it was ready on 127.0.0.1:$PORT"; }
    if [ "$(date +%s)" -ge "$deadline" ]; then
      if [ -n "$ours" ]; then
        kill -KILL "$pid" 2>/dev/null || true
        rm -f "$PID_FILE"
      fi
      fail_with_log "Kafka (pid $pid) was not ready on 127.0.0.1:$PORT within ${START_TIMEOUT}s (no '$READY_MESSAGE' in the log)${ours:+; killed it}"
    fi
    sleep 0.2
  done
}

print_brokers() { printf 'KAFKA_BROKERS=127.0.0.1:%s\n' "$PORT" >&3; }

write_config() {
  cat >"$CONFIG" <<EOF
# Generated by scripts/servers/kafka.sh: a single-node KRaft test broker (do not edit here).
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$PORT,CONTROLLER://127.0.0.1:$CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$PORT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
log.dirs=$DATA_DIR
metadata.log.dir=$DATA_DIR
auto.create.topics.enable=true
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
# One replica of everything, and few partitions for the internal topics: the first consumer
# group and the first idempotent producer then come up in well under a second.
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
group.initial.rebalance.delay.ms=0
num.network.threads=2
num.io.threads=2
num.recovery.threads.per.data.dir=1
log.retention.hours=24
log.retention.check.interval.ms=300000
EOF
  cat >"$LOG4J_CONFIG" <<'EOF'
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka=INFO
log4j.logger.org.apache.kafka=INFO
log4j.logger.state.change.logger=WARN
log4j.logger.kafka.request.logger=WARN
log4j.logger.kafka.log.LogCleaner=WARN
log4j.logger.org.apache.kafka.storage.internals.log=WARN
log4j.logger.kafka.log=WARN
log4j.logger.org.apache.kafka.clients=WARN
EOF
}

# A KRaft cluster id: 16 random bytes, base64url without padding (what `StorageTool random-uuid`
# prints), made here to save a JVM start. Never one that starts with '-': the format tool's
# argument parser takes it for an option and refuses to start (1 run in 64 failed so); Kafka's
# own Uuid.randomUuid() draws again in that case for the same reason.
random_cluster_id() {
  local id
  while :; do
    id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
    [ "${id:0:1}" != "-" ] && break
  done
  printf '%s' "$id"
}

format_storage() {
  local java=$1 id
  [ -f "$DATA_DIR/meta.properties" ] && return 0
  id=$(random_cluster_id)
  log "formatting KRaft storage in $DATA_DIR (cluster id $id)"
  mkdir -p "$DATA_DIR"
  "$java" $HEAP_OPTS -Dlog4j.configuration="file:$LOG4J_CONFIG" -cp "$LIBS_DIR/*" \
    kafka.tools.StorageTool format -t "$id" -c "$CONFIG" >>"$LOG_FILE" 2>&1 \
    || fail_with_log "kafka.tools.StorageTool format failed"
}

start_kafka() {
  local started java pid
  started=$(date +%s)
  install_kafka
  mkdir -p "$STATE_ROOT"

  if pid=$(running_pid); then
    log "already running (pid $pid) on 127.0.0.1:$PORT"
    wait_ready "$pid"
    print_brokers
    return 0
  fi
  rm -f "$PID_FILE"
  local p
  for p in "$PORT" "$CONTROLLER_PORT"; do
    port_open "$p" && die "127.0.0.1:$p is already in use by another process (not the Kafka in $STATE_ROOT); stop it or set KAFKA_PORT / KAFKA_CONTROLLER_PORT"
  done

  java=$(find_java)
  write_config
  touch "$LOG_FILE"
  stat -c %s "$LOG_FILE" >"$LOG_OFFSET_FILE"
  printf '\n=== %s start on 127.0.0.1:%s (controller %s) ===\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$PORT" "$CONTROLLER_PORT" >>"$LOG_FILE"
  format_storage "$java"

  log "starting Kafka $KAFKA_VERSION on 127.0.0.1:$PORT (data: $DATA_DIR, log: $LOG_FILE)"
  # setsid + nohup: the broker outlives the shell that started it (the test runner's `$(...)`).
  # It must not inherit fd 3 (our real stdout): a caller's `$(...)` would wait for it to exit.
  # shellcheck disable=SC2086 # HEAP_OPTS is a list of flags
  setsid nohup "$java" $HEAP_OPTS \
    -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExplicitGCInvokesConcurrent \
    -Djava.awt.headless=true \
    -Dlog4j.configuration="file:$LOG4J_CONFIG" \
    -Dkafka.logs.dir="$STATE_ROOT" \
    -cp "$LIBS_DIR/*" \
    kafka.Kafka "$CONFIG" \
    >>"$LOG_FILE" 2>&1 </dev/null 3>&- 9>&- &
  pid=$!
  echo "$pid" >"$PID_FILE"
  wait_ready "$pid" ours
  log "ready (pid $pid) in $(($(date +%s) - started))s"
  print_brokers
}



case "${1:-}" in
  install) install_kafka ;;
  start) start_kafka ;;
  stop) stop_server 30 ;;
  status) status_server print_brokers ;;
  *) die "usage: $0 install|start|stop|status" ;;
esac
