#!/usr/bin/env bash
# Everything CI runs: typecheck, lint, unit tests, production build, browser tests.
set -euo pipefail
cd "$(dirname "$0")/.."
export NEXT_TELEMETRY_DISABLED=1

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

if [ ! -d node_modules ]; then step "npm ci"; npm ci; fi
step "system packages"; bash scripts/ensure-system-deps.sh
step "postgresql"; bash scripts/ensure-postgres.sh
step "typecheck"; npx tsc --noEmit -p .
step "lint"; npx eslint .
step "unit tests"; npx vitest run
step "build"; npx next build
step "e2e"; bash scripts/e2e.sh
