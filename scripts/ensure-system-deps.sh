#!/usr/bin/env bash
# System packages the tests need that npm cannot install: Chromium for the browser tests, and
# bubblewrap + socat + ripgrep for sandboxed hands (@anthropic-ai/sandbox-runtime), setpriv for a
# root server's hands (each runs as a uid of its own), setcap/getcap for the tests that prove it,
# gcc and libc's static library for the hands' native executor (server/hands/sandbox/native/).
set -euo pipefail
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v bwrap >/dev/null || missing+=(bubblewrap)
command -v socat >/dev/null || missing+=(socat)
command -v rg >/dev/null || missing+=(ripgrep)
command -v setpriv >/dev/null || missing+=(util-linux)
command -v setcap >/dev/null || missing+=(libcap2-bin)
command -v gcc >/dev/null || missing+=(gcc libc6-dev)
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing from Debian's packages: ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
