#!/usr/bin/env bash
# Everything CI runs: typecheck, lint, unit tests, production build, browser tests.
set -euo pipefail
cd "$(dirname "$0")/.."
export NEXT_TELEMETRY_DISABLED=1
# The chaos test kills harness processes for this long (its own default is 60 s; `npm run bench` soaks for minutes).
export PADDOCK_CHAOS_SECONDS="${PADDOCK_CHAOS_SECONDS:-40}"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

# A Node that Paddock supports, fetched from the npm registry when the machine's is older.
source scripts/supported-node.sh
paddock_use_supported_node
if [ ! -d node_modules ]; then step "npm ci"; npm ci; fi
paddock_native_modules_ok
step "system packages"; bash scripts/ensure-system-deps.sh
step "postgresql"; bash scripts/ensure-postgres.sh
step "typecheck"; npx tsc --noEmit -p .
step "lint"; npx eslint .
step "unit tests"; npx vitest run
step "build"; npx next build
step "e2e"; bash scripts/e2e.sh
