#!/usr/bin/env bash
# Browser tests: Debian's Chromium against `next start` and the fake Messages API.
# E2E_PORT_OFFSET moves the stack's whole block of ports (e2e/ports.ts), so a second stack (another
# worktree) can run beside this one; on 2 cores two stacks at once starve each other's specs.
set -euo pipefail
cd "$(dirname "$0")/.."
export NEXT_TELEMETRY_DISABLED=1
# The specs' MCP servers and git hosts run on loopback, which the outbound address policy refuses otherwise.
export PADDOCK_OUTBOUND_ALLOW="${PADDOCK_OUTBOUND_ALLOW:-127.0.0.1,localhost,[::1]}"
bash scripts/ensure-system-deps.sh
[ -d .next ] || npx next build
export E2E_DATA_DIR="$(mktemp -d /tmp/paddock-e2e.XXXXXX)"
trap 'rm -rf "$E2E_DATA_DIR"' EXIT
npx playwright test "$@"
