import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * Who a sandboxed hand is on the host when the server runs as root.
 *
 * sandbox-runtime maps a root caller's uid 0 into the sandbox as itself, and its seccomp helper's
 * nested user namespace gives the command a full capability set there: a hand was the host's root
 * (it could `setcap` a file any local user then ran to become root, and read root-only files). So a
 * root launcher runs each hand as a host uid of its own, with no capabilities and no-new-privileges:
 * bubblewrap still sets the sandbox up as root (it must see the paths it binds, some under 0700
 * folders), then `setpriv` drops to the hand's uid just before the seccomp helper, which, started
 * by an unprivileged uid, maps that uid to itself and leaves the command no capability at all.
 *
 * No user is created: the ids come from a range that no distribution, container runtime or systemd
 * allocates (0x70000000 and up; systemd's container ranges end below it), one per workspace, stable
 * so a resumed hand finds its files its own. A uid with no passwd entry is fine for shells, git,
 * node and ripgrep (`whoami` says it has no name).
 */
export interface HandIdentity {
  uid: number;
  gid: number;
}

export const HAND_ID_BASE = 0x7000_0000;
export const HAND_ID_SPAN = 0x1_0000;

/** The host uid and gid of the hand working in `workspace` (derived from its path). */
export function handIdentity(workspace: string): HandIdentity {
  const n = createHash('sha256').update(path.resolve(workspace)).digest().readUInt32BE(0) % HAND_ID_SPAN;
  return { uid: HAND_ID_BASE + n, gid: HAND_ID_BASE + n };
}

/** Whether a uid is one of the hands' (a file a hand made, seen from the host). */
export const isHandId = (uid: number) => uid >= HAND_ID_BASE && uid < HAND_ID_BASE + HAND_ID_SPAN;

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * The bubblewrap the runtime is given when we are root: the real one, with
 * - the runtime's `--unshare-user --cap-drop ALL [--cap-add CAP_SETFCAP]` replaced by the three
 *   capabilities `setpriv` needs to become the hand (bubblewrap without a user namespace keeps
 *   only those, and sets no-new-privileges);
 * - the folders bubblewrap makes inside a hidden (tmpfs) folder on the way to a path it binds back
 *   made 0755 (it makes them 0700, which only root could cross);
 * - the sandbox's private /tmp and /var/tmp writable by the hand, as they were by root;
 * - the options passed through a pipe (`--args`), off the command line the hand can read.
 * The runtime's probes (no `--unshare-pid`: --version, --help) pass through. A sandbox call whose
 * arguments are not of the shape we know fails: a runtime upgrade must not run hands as root again.
 */
export function bwrapShim(realBwrap: string): string {
  return `#!/bin/bash
# Written by the Paddock sandbox launcher (server/hands/sandbox/hand-identity.ts).
real=${quote(realBwrap)}
refuse() { echo "sandbox-launcher: $1; refusing to run a hand as root" >&2; exit 70; }
sandbox=0
for a in "$@"; do [ "$a" = --unshare-pid ] && sandbox=1; done
[ $sandbox = 1 ] || exec "$real" "$@"
args=("$@"); out=(); cmd=(); mounts=(); kinds=(); n=\${#args[@]}; i=0; users=0; drops=0
# The folders between the mount covering $1 and $1, when that mount is a tmpfs.
parents() {
  local d=$1 best= kind= j p rest
  for ((j = \${#mounts[@]} - 1; j >= 0; j--)); do
    if [ "\${mounts[j]}" = / ] || [[ $d == "\${mounts[j]}"/* ]]; then best=\${mounts[j]}; kind=\${kinds[j]}; break; fi
  done
  [ "$kind" = t ] || return 0
  p=\${best%/}; rest=\${d#"$p"/}
  while [[ $rest == */* ]]; do p="$p/\${rest%%/*}"; rest=\${rest#*/}; out+=(--perms 0755 --dir "$p"); done
}
while [ $i -lt $n ]; do
  a=\${args[i]}
  case $a in
    --) cmd=("\${args[@]:i}"); break ;;
    --bind | --ro-bind | --dev-bind | --bind-try | --ro-bind-try | --dev-bind-try)
      parents "\${args[i+2]}"; mounts+=("\${args[i+2]}"); kinds+=(b)
      out+=("$a" "\${args[i+1]}" "\${args[i+2]}"); i=$((i + 3)) ;;
    --tmpfs)
      case \${args[i+1]} in /tmp | /var/tmp) out+=(--perms 1777) ;; esac
      parents "\${args[i+1]}"; mounts+=("\${args[i+1]}"); kinds+=(t)
      out+=("$a" "\${args[i+1]}"); i=$((i + 2)) ;;
    --proc | --dev)
      mounts+=("\${args[i+1]}"); kinds+=(b); out+=("$a" "\${args[i+1]}"); i=$((i + 2)) ;;
    --unshare-user) users=$((users + 1)); i=$((i + 1)) ;;
    --cap-drop)
      [ "\${args[i+1]}" = ALL ] || refuse "unexpected --cap-drop \${args[i+1]}"
      out+=(--cap-drop ALL --cap-add CAP_SETUID --cap-add CAP_SETGID --cap-add CAP_SETPCAP); drops=$((drops + 1)); i=$((i + 2)) ;;
    --cap-add)
      [ "\${args[i+1]}" = CAP_SETFCAP ] || refuse "unexpected --cap-add \${args[i+1]}"
      i=$((i + 2)) ;;
    --setenv | --symlink | --chmod | --file | --bind-data | --ro-bind-data)
      out+=("$a" "\${args[i+1]}" "\${args[i+2]}"); i=$((i + 3)) ;;
    --unsetenv | --perms | --dir | --args | --chdir | --remount-ro | --size | --mqueue | --hostname | --seccomp | --add-seccomp-fd | --info-fd | --json-status-fd | --block-fd | --sync-fd | --lock-file | --argv0)
      out+=("$a" "\${args[i+1]}"); i=$((i + 2)) ;;
    --new-session | --die-with-parent | --unshare-pid | --unshare-net | --unshare-ipc | --unshare-uts | --unshare-cgroup | --unshare-cgroup-try | --as-pid-1 | --clearenv)
      out+=("$a"); i=$((i + 1)) ;;
    *) refuse "unexpected bubblewrap argument $a" ;;
  esac
done
[ $users = 1 ] && [ $drops = 1 ] && [ \${#cmd[@]} -gt 1 ] || refuse "the sandbox runtime's bubblewrap call has changed"
# The options (the proxy's credentials, host paths) go in through a pipe, not the command line,
# which every process in the sandbox can read in /proc/1/cmdline.
exec "$real" --args 3 "\${cmd[@]}" 3< <(printf '%s\\0' "\${out[@]}")
`;
}

/**
 * The seccomp helper as the runtime starts it, but as the hand: every id the hand's, no
 * supplementary group, no capability (bounding and inheritable sets emptied), no-new-privileges.
 * HOME is set here, not before: the sandbox's root stage (bash, the proxy relays) cannot enter the
 * hand's home, and bash on a socket stdin reads ~/.bashrc.
 */
export function applySeccompShim(id: HandIdentity, setpriv: string, realApplySeccomp: string, home: string): string {
  return `#!/bin/sh
# Written by the Paddock sandbox launcher (server/hands/sandbox/hand-identity.ts).
export HOME=${quote(home)}
exec ${quote(setpriv)} --reuid=${id.uid} --regid=${id.gid} --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs -- ${quote(realApplySeccomp)} "$@"
`;
}

/**
 * Makes a folder the hand's. A folder already the hand's is left as is (a resumed hand's files are
 * its own); another one (made by the server, or by a version that ran hands as root) is given to
 * it whole, without following links.
 */
export async function giveToHand(dir: string, id: HandIdentity): Promise<void> {
  const st = await fs.lstat(dir);
  if (st.uid === id.uid && st.gid === id.gid) return;
  const walk = async (p: string): Promise<void> => {
    await fs.lchown(p, id.uid, id.gid);
    const entries = await fs.readdir(p, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      const child = path.join(p, e.name);
      if (e.isDirectory()) await walk(child);
      else await fs.lchown(child, id.uid, id.gid);
    }
  };
  await walk(dir);
}
