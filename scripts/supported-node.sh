# Sourced by ./paddock and scripts/test.sh: puts a Node.js that Paddock supports (22 or newer) first
# on PATH. The machine's own Node when it is one; otherwise Node 22 from the npm registry (the
# `node-<platform>-<arch>` binary package, the one the `node` package installs), cached under
# ~/.cache/paddock, so nothing has to be installed by hand and CI runs what users run.
# Native addons (better-sqlite3) are then built against that Node's own headers.

PADDOCK_NODE_MAJOR=22

paddock_node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

# Some Node installs (Debian's nodejs without its npm package on PATH, a bare binary) have no `npm`
# command. Use the npm that ships beside that Node when there is one, else fetch npm's tarball from
# the registry, and put `npm`/`npx` shims first on PATH so child scripts find them too.
paddock_ensure_npm() {
  command -v npm >/dev/null 2>&1 && return 0
  local cache cli prefix
  cache="${PADDOCK_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/paddock}"
  prefix=$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")
  cli="$prefix/lib/node_modules/npm/bin"
  if [ ! -f "$cli/npm-cli.js" ]; then
    cli="$cache/npm/package/bin"
    if [ ! -f "$cli/npm-cli.js" ]; then
      echo "paddock: this machine's Node has no npm; fetching npm 10 from the npm registry into $cache/npm" >&2
      mkdir -p "$cache/npm"
      local url
      # The newest npm 10 (it runs on Node 18 and later); the packument, since not every registry serves ranges.
      url=$(curl -fsSL https://registry.npmjs.org/npm | node -e '
        let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
          const v = Object.values(JSON.parse(s).versions).filter((p) => /^10\.\d+\.\d+$/.test(p.version));
          v.sort((a, b) => a.version.split(".")[1] - b.version.split(".")[1] || a.version.split(".")[2] - b.version.split(".")[2]);
          console.log(v.at(-1).dist.tarball);
        });') &&
        curl -fsSL "$url" | tar -xz -C "$cache/npm" || {
          echo "paddock: could not fetch npm; install npm (Debian: apt install npm) and run this again" >&2
          return 1
        }
    fi
  fi
  mkdir -p "$cache/npm-bin"
  printf '#!/bin/sh\nexec node "%s/npm-cli.js" "$@"\n' "$cli" > "$cache/npm-bin/npm"
  printf '#!/bin/sh\nexec node "%s/npx-cli.js" "$@"\n' "$cli" > "$cache/npm-bin/npx"
  chmod +x "$cache/npm-bin/npm" "$cache/npm-bin/npx"
  export PATH="$cache/npm-bin:$PATH"
}

paddock_use_supported_node() {
  if ! command -v node >/dev/null 2>&1; then
    echo "paddock: Node.js is not installed; install Node.js ${PADDOCK_NODE_MAJOR} or 24 (https://nodejs.org) and run this again" >&2
    return 1
  fi
  paddock_ensure_npm || return 1
  local have
  have=$(paddock_node_major)
  if [ "$have" -ge "$PADDOCK_NODE_MAJOR" ]; then
    # The Node we fetched before, already first on PATH: native addons still build against its own headers.
    local self
    self=$(dirname "$(dirname "$(command -v node)")")
    if [ -f "$self/include/node/node.h" ] && [ -z "${npm_config_nodedir:-}" ]; then export npm_config_nodedir="$self"; fi
    return 0
  fi
  local pkg dir
  pkg="node-$(node -p 'process.platform')-$(node -p 'process.arch')"
  dir="${PADDOCK_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/paddock}/node-${PADDOCK_NODE_MAJOR}"
  if [ ! -x "$dir/node_modules/$pkg/bin/node" ]; then
    echo "paddock: this machine has Node $(node -v), Paddock needs ${PADDOCK_NODE_MAJOR} or newer: fetching ${pkg}@${PADDOCK_NODE_MAJOR} from the npm registry into $dir" >&2
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-save --no-audit --no-fund --no-package-lock --loglevel=error "${pkg}@${PADDOCK_NODE_MAJOR}" >&2 || {
      echo "paddock: could not fetch ${pkg}@${PADDOCK_NODE_MAJOR}; install Node.js ${PADDOCK_NODE_MAJOR} or 24 yourself" >&2
      return 1
    }
  fi
  export PATH="$dir/node_modules/$pkg/bin:$PATH"
  # node-gyp builds native addons against these headers instead of the machine's older ones.
  export npm_config_nodedir="$dir/node_modules/$pkg"
  echo "paddock: using Node $(node -v) from $dir" >&2
}

# node_modules holds native code built for one Node ABI: rebuild it when it was installed under another Node.
paddock_native_modules_ok() {
  [ -d node_modules/better-sqlite3 ] || return 0
  if node -e "new (require('better-sqlite3'))(':memory:').close()" >/dev/null 2>&1; then return 0; fi
  echo "paddock: node_modules was built for another Node version; rebuilding better-sqlite3 for Node $(node -v)" >&2
  npm rebuild better-sqlite3 >&2
  if ! node -e "new (require('better-sqlite3'))(':memory:').close()" >/dev/null 2>&1; then
    echo "paddock: better-sqlite3 still does not load on Node $(node -v) after a rebuild; remove node_modules and run this again" >&2
    return 1
  fi
}

# Dependencies installed (npm ci) when node_modules is missing or older than the lock file, and
# native addons built for the Node in use.
paddock_install_deps() {
  if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    echo "paddock: installing dependencies (npm ci)…" >&2
    # --prefer-offline: packages already in npm's cache are not re-checked with the registry (the
    # lock file pins each by its integrity hash), so a second checkout installs without waiting on it.
    npm ci --prefer-offline --no-audit --no-fund
  fi
  paddock_native_modules_ok
}
