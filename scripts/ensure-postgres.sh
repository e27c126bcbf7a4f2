#!/usr/bin/env bash
# Makes sure PostgreSQL answers on 127.0.0.1:5432 for the Postgres session store's tests
# (server/session/postgres-store.test.ts): starts the local Debian cluster if it is down, and
# installs Debian's postgresql first if there is no cluster at all.
set -euo pipefail
HOST=127.0.0.1

ready() { command -v pg_isready >/dev/null && pg_isready -q -h "$HOST"; }
ready && exit 0

if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
clusters() { ls -d /etc/postgresql/*/main 2>/dev/null | sort -V; }

installed=
if [ -z "$(clusters)" ]; then
  installed=1
  echo "no PostgreSQL cluster: installing Debian's postgresql"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql >/dev/null
  version=$(basename "$(dirname "$(clusters | tail -n 1)")")
  # A cluster made here is a throwaway test server: let local TCP connections in without a
  # password, as the tests connect (postgres@127.0.0.1). The first matching pg_hba line wins.
  hba=/etc/postgresql/$version/main/pg_hba.conf
  $SUDO sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust' "$hba"
fi

version=$(basename "$(dirname "$(clusters | tail -n 1)")")
echo "starting PostgreSQL $version (cluster main)"
# A cluster that is up but was not ready a moment ago makes this fail; the wait below decides.
$SUDO pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
# The package may have started the cluster before pg_hba.conf was edited above.
if [ -n "$installed" ]; then $SUDO pg_ctlcluster --skip-systemctl-redirect "$version" main reload; fi

for _ in $(seq 1 60); do
  ready && exit 0
  sleep 0.5
done
echo "PostgreSQL did not become ready on $HOST:5432" >&2
exit 1
