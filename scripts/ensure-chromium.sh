#!/usr/bin/env bash
# Browser tests use Debian's Chromium (Playwright's own download cannot reach its host here).
set -euo pipefail
if [ -x /usr/bin/chromium ]; then exit 0; fi
echo "installing chromium from Debian's packages…"
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
/usr/bin/chromium --version
