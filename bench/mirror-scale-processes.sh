#!/usr/bin/env bash
# Mirroring at a scale one JVM cannot hold (issue 27 point 6): two Twinlog clusters, each a ZooKeeper process and
# three broker processes (io.twinlog.server.Main with config/server.properties, as bin/twinlog-server-start.sh runs
# it), driven from another process by
# io.twinlog.bench.MirrorScaleProcesses (create and fill, start, steady, describe, failover, failback); then the heap
# per partition of one 3-broker cluster of Twinlog and of Apache Kafka 4.4 in a JVM each. Not a test.
#
#   bench/mirror-scale-processes.sh --mirror-partitions 10000 --mirror-replication-factor 1 --mirror-topic-partitions 100
#
# Options are BenchMain's (--mirror-partitions, --mirror-topic-partitions, --mirror-replication-factor,
# --mirror-steady-seconds). Needs the bench built (`mvn -o -Pbench -DskipTests package -pl bench` after an install)
# and vm.max_map_count above two memory maps per log in a broker process (each log maps its offset and time
# indexes; the default 65,530 holds 10,000 RF 1 partitions over three brokers); run it under `flock /tmp/twinlog-mvn.lock` on a shared machine. SCALE_BROKER_HEAP (default 1536m)
# is each broker process's heap; SCALE_BROKER_JAVA_OPTS adds JVM options to the broker processes (a flight
# recording, say) and SCALE_LOG4J_CONFIG replaces the log4j2 configuration of every process. Results: bench/results/mirror-scale-processes*.md.
set -euo pipefail

bench_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root_dir="$(dirname "$bench_dir")"
shopt -s nullglob
jars=("$bench_dir"/target/twinlog-bench-*.jar)
if [[ ${#jars[@]} -eq 0 || ! -d "$bench_dir/target/lib" ]]; then
  echo "Build the benchmark first: mvn -o -Pbench -DskipTests package -pl bench" >&2
  exit 1
fi
classpath="${jars[0]}:$bench_dir/target/lib/*"
logging="-Dlog4j2.configurationFile=${SCALE_LOG4J_CONFIG:-$bench_dir/src/main/resources/log4j2-bench.properties}"
# extra JVM options of the broker processes only (a flight recording: give an existing directory as its filename,
# so that each process writes its own file)
read -r -a broker_opts <<<"${SCALE_BROKER_JAVA_OPTS:-}"
heap="${SCALE_BROKER_HEAP:-1536m}"
echo "vm.max_map_count=$(cat /proc/sys/vm/max_map_count), open files per process: $(ulimit -n)" >&2

data="$(mktemp -d /tmp/twinlog-scale-XXXXXX)"
pids=()
zookeepers=()
cleanup() { # the brokers first, then their ZooKeepers, so that no broker sees its ZooKeeper go before it stops
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  for pid in "${zookeepers[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${zookeepers[@]}"; do wait "$pid" 2>/dev/null || true; done
  mkdir -p "$bench_dir/results"
  for log in "$data"/*.log; do
    [[ -e "$log" ]] && cp "$log" "$bench_dir/results/mirror-scale-processes-$(basename "$log")"
  done
  rm -rf "$data"
}
trap cleanup EXIT

start_cluster() { # name first-port zookeeper-port: a ZooKeeper process and three broker processes
  mkdir -p "$data/$1"
  printf 'dataDir=%s\nclientPort=%s\nclientPortAddress=127.0.0.1\ntickTime=2000\nmaxClientCnxns=0\nadmin.enableServer=false\n4lw.commands.whitelist=srvr,ruok\n' \
    "$data/$1/zookeeper" "$3" >"$data/$1/zookeeper.properties"
  java -Xmx512m "$logging" -cp "$classpath" org.apache.zookeeper.server.quorum.QuorumPeerMain \
    "$data/$1/zookeeper.properties" >"$data/$1-zookeeper.log" 2>&1 &
  zookeepers+=("$!")
  for id in 0 1 2; do
    java "-Xmx$heap" -XX:+UseG1GC "$logging" ${broker_opts[@]+"${broker_opts[@]}"} -cp "$classpath" io.twinlog.server.Main \
      "$root_dir/config/server.properties" --override "broker.id=$id" \
      --override "listeners=PLAINTEXT://127.0.0.1:$(( $2 + id ))" --override "log.dirs=$data/$1/broker-$id" \
      --override "zookeeper.connect=127.0.0.1:$3" --override "zookeeper.session.timeout.ms=30000" \
      >"$data/$1-broker-$id.log" 2>&1 &
    pids+=("$!")
  done
}
start_cluster source 19092 12181
start_cluster destination 19192 12182
echo "Clusters starting (logs in $data/*.log, kept as bench/results/mirror-scale-processes-*.log)" >&2

java -Xmx1g -XX:+UseG1GC "$logging" -cp "$classpath" \
  -Dscale.source=127.0.0.1:19092,127.0.0.1:19093,127.0.0.1:19094 \
  -Dscale.destination=127.0.0.1:19192,127.0.0.1:19193,127.0.0.1:19194 \
  -Dscale.sourceZk=12181 -Dscale.destinationZk=12182 \
  -Dscale.output="$bench_dir/results/mirror-scale-processes.md" \
  io.twinlog.bench.MirrorScaleProcesses "$@"
cleanup
pids=()
zookeepers=()
data="$(mktemp -d /tmp/twinlog-scale-XXXXXX)"

for system in twinlog kafka; do
  java -Xmx4g -XX:+UseG1GC "$logging" -Djava.io.tmpdir="$data" -cp "$classpath" -Dscale.heap="$system" \
    -Dscale.output="$bench_dir/results/mirror-scale-processes-heap-$system.md" \
    io.twinlog.bench.MirrorScaleProcesses "$@"
done
