#!/usr/bin/env bash
# The fault campaign over real processes (issue 25, point 11; docs/reliability.md):
#   bin/twinlog-fault-campaign.sh [--seed S] [--duration 10m] [--faults KIND,...] [--work-dir DIR] [--keep-data] [--netns]
# Starts a 3-node ZooKeeper ensemble and two 3-broker Twinlog clusters as separate JVMs on loopback, mirrors a topic
# between them under a steady acks=all producer and a consumer group, and injects seeded faults round after round,
# checking the invariants after each. Prints its seed first; exits 1 with the seed, the round and what was seen when
# an invariant breaks (data dirs kept), 0 when all held. --netns puts each process in a network namespace of its own
# (its own address on 10.77.0.0/24 behind a bridge, as separate hosts; needs root and iproute2; one such run at a time).
# Source tree only: builds the campaign module first (mvn -o package, tests skipped, nothing installed). On a shared
# machine run it as `flock /tmp/twinlog-mvn.lock bin/twinlog-fault-campaign.sh ...`.
# Environment: JAVA_HOME; TWINLOG_CAMPAIGN_SKIP_BUILD=1 reuses twinlog-campaign/target.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
module="$root/twinlog-campaign"
if [[ ! -f "$module/pom.xml" ]]; then
  echo "twinlog-fault-campaign: needs a source tree (no $module/pom.xml)" >&2
  exit 2
fi
if [[ "${TWINLOG_CAMPAIGN_SKIP_BUILD:-0}" != "1" ]]; then
  echo "Building the campaign (mvn -o -q package -pl twinlog-campaign -am -DskipTests)..." >&2
  (cd "$root" && mvn -o -B -q -DskipTests package -pl twinlog-campaign -am) >&2
fi
java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
# its own process group: if the campaign dies, `kill -- -PGID` ends every broker and ZooKeeper it started
exec "$java" -Xmx512m -cp "$module/target/classes:$module/target/lib/*" io.twinlog.campaign.CampaignMain "$@"
