#!/usr/bin/env bash
# Browser tests: Debian's Chromium against `next start` and the fake Messages API.
# PADDOCK_E2E_SHARDS=2 (for machines with 4 or more cores) runs the specs in two shards at once,
# each with a stack of its own (fake Messages API, app and demo servers, data directory;
# E2E_PORT_OFFSET moves its ports). On 2 cores two shards starve each other (tests time out), so
# one shard is the default. Arguments (a spec, -g …) always run one shard.
set -euo pipefail
cd "$(dirname "$0")/.."
export NEXT_TELEMETRY_DISABLED=1
# The specs' MCP servers and git hosts run on loopback, which the outbound address policy refuses otherwise.
export PADDOCK_OUTBOUND_ALLOW="${PADDOCK_OUTBOUND_ALLOW:-127.0.0.1,localhost,[::1]}"
bash scripts/ensure-system-deps.sh
[ -d .next ] || npx next build

SHARDS="${PADDOCK_E2E_SHARDS:-1}"
if [ $# -gt 0 ] || [ "$SHARDS" -le 1 ]; then
  export E2E_DATA_DIR="$(mktemp -d /tmp/paddock-e2e.XXXXXX)"
  trap 'rm -rf "$E2E_DATA_DIR"' EXIT
  exec npx playwright test "$@"
fi

dirs=()
trap 'rm -rf "${dirs[@]}"' EXIT
pids=()
for i in $(seq 1 "$SHARDS"); do
  dir="$(mktemp -d /tmp/paddock-e2e.XXXXXX)"
  dirs+=("$dir")
  (
    export E2E_DATA_DIR="$dir" E2E_PORT_OFFSET=$(((i - 1) * 1000))
    npx playwright test --shard="$i/$SHARDS" --output="test-results/shard-$i" 2>&1 | sed -u "s/^/[shard $i] /"
  ) &
  pids+=($!)
done
failed=0
for i in "${!pids[@]}"; do
  if ! wait "${pids[$i]}"; then
    echo "e2e: shard $((i + 1)) of $SHARDS failed (its lines are marked [shard $((i + 1))])" >&2
    failed=1
  fi
done
exit "$failed"
