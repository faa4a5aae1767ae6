#!/usr/bin/env bash
# Builds Twinlog with the bench module and runs the Twinlog vs Apache Kafka benchmark: single-node
# produce/consume, replicated produce on three brokers, leader failover, and, when named in --phases, sasl-ssl, txn,
# mirror (against MirrorMaker 2), mirror-scale, groups, fetch-sessions, latency and failback. Throughput workloads run for a
# warm-up and a measured interval (5 s and 20 s), 5 rounds; --quick gives the headline ratios in about 9 minutes.
#
#   bench/run.sh [--quick] [--warmup-seconds N] [--measure-seconds N] [--records N] [--record-size N]
#                [--systems twinlog,kafka] [--phases single,sasl-ssl,replicated,failover,txn,mirror,groups,...]
#                [--mirror-setups twinlog,mm2-twinlog,mm2-kafka] [--group-commits N] [--group-repetitions N]
#                [--session-timeout-ms N] [--rounds N] [--seed N] [--page-cache-ballast true|false]
#                [--output FILE]
#
# On a machine shared with other builds, run it as `flock /tmp/twinlog-mvn.lock bench/run.sh ...`.
# Results are printed on stdout and written to bench/results/latest.md; progress goes to stderr; MirrorMaker 2's
# own log to bench/results/mm2-<setup>-round<N>.log.
# Set TWINLOG_BENCH_SKIP_BUILD=1 to reuse an earlier build (bench/target) instead of running Maven, or
# TWINLOG_BENCH_NO_INSTALL=1 to build offline without installing into ~/.m2 (reactor `package -pl bench -am`: the
# Twinlog jars in bench/target/lib are then this worktree's, and other builds sharing ~/.m2 are left alone).
# JVM options: BENCH_JAVA_OPTS (default -Xms2g -Xmx2g -XX:+AlwaysPreTouch -XX:+UseG1GC: the heap touched once at start, see PageCacheBallast). See bench/README.md.
set -euo pipefail

bench_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root_dir="$(dirname "$bench_dir")"

# --help needs no build.
help_only=0
for arg in "$@"; do
  [[ "$arg" == --help || "$arg" == -h ]] && help_only=1
done

if [[ "${TWINLOG_BENCH_SKIP_BUILD:-0}" != "1" && "$help_only" != 1 && "${TWINLOG_BENCH_NO_INSTALL:-0}" == "1" ]]; then
  echo "Building Twinlog and the benchmark (mvn -o -Pbench package -pl bench -am, tests skipped, no install)..." >&2
  (cd "$root_dir" && mvn -B -q -o -Pbench -DskipTests package -pl bench -am) >&2
elif [[ "${TWINLOG_BENCH_SKIP_BUILD:-0}" != "1" && "$help_only" != 1 ]]; then
  echo "Building Twinlog and the benchmark (mvn -Pbench install, tests skipped)..." >&2
  # Maven's output goes to stderr so that stdout carries only the results.
  (cd "$root_dir" && mvn -B -q -Pbench -DskipTests install) >&2
fi

# The mirror phase runs Apache Kafka MirrorMaker 2 (connect-mirror 4.3.1) as a separate process on its own
# classpath, listed by bench/mm2/pom.xml (not part of the reactor). Build that list when the phase is asked for
# and the list is missing or older than the pom.
mm2_classpath="$bench_dir/mm2/target/classpath.txt"
# (mirror-scale runs no MirrorMaker 2; the latency phase does.)
all_args=" $* ${BENCH_JAVA_OPTS:-} "
needs_mm2=0
[[ "${all_args//mirror-scale/}" == *mirror* || "$all_args" == *latency* ]] && needs_mm2=1
if [[ "$help_only" != 1 && "$needs_mm2" == 1 && ( ! -s "$mm2_classpath" || "$bench_dir/mm2/pom.xml" -nt "$mm2_classpath" ) ]]; then
  echo "Resolving the MirrorMaker 2 classpath (bench/mm2/pom.xml)..." >&2
  mvn -B -q -f "$bench_dir/mm2/pom.xml" dependency:build-classpath -Dmdep.outputFile="$mm2_classpath" >&2
fi

shopt -s nullglob
jars=("$bench_dir"/target/twinlog-bench-*.jar)
if [[ ${#jars[@]} -eq 0 || ! -d "$bench_dir/target/lib" ]]; then
  echo "No build found in $bench_dir/target; run without TWINLOG_BENCH_SKIP_BUILD=1 first." >&2
  exit 1
fi

revision="$(git -C "$root_dir" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [[ "$revision" != unknown && -n "$(git -C "$root_dir" status --porcelain --untracked-files=no 2>/dev/null)" ]]; then
  revision="$revision+uncommitted"
fi

# BENCH_JAVA_OPTS comes last so that it can also override these -D defaults.
# shellcheck disable=SC2086 # BENCH_JAVA_OPTS is a list of options
exec java \
  -Dlog4j2.configurationFile="$bench_dir/src/main/resources/log4j2-bench.properties" \
  -Dbench.gitRevision="$revision" \
  -Dbench.output="$bench_dir/results/latest.md" \
  -Dbench.mm2Classpath="$mm2_classpath" \
  -Dbench.mm2LogDir="$bench_dir/results" \
  ${BENCH_JAVA_OPTS:--Xms2g -Xmx2g -XX:+AlwaysPreTouch -XX:+UseG1GC} \
  -cp "${jars[0]}:$bench_dir/target/lib/*" \
  io.twinlog.bench.BenchMain "$@"
