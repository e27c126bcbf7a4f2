import { z } from 'zod';

/**
 * A sandbox hand's mounts as bubblewrap binds: host folders bound at fixed paths in the hand
 * (`/mnt/session/uploads` read-only, `/mnt/session/outputs` writable, …; see lib/mounts.ts and
 * docs/hands.md). sandbox-runtime has no option for a bind to another path, so the launcher puts a
 * small bwrap in front of the one the runtime runs: it adds the binds after every mount of the
 * runtime's (so they land over the tmpfs hiding /mnt) and before the command.
 */
export interface BindMount {
  /** The folder on the host. */
  source: string;
  /** Where the hand sees it. */
  target: string;
  readOnly: boolean;
}

const Absolute = z.string().regex(/^\/[^\0]*$/, 'must be an absolute path');
export const BindMountSchema = z.strictObject({ source: Absolute, target: Absolute, readOnly: z.boolean() });

/** The bwrap options for the binds, in order (a later bind goes over an earlier one). */
export function bindArgs(mounts: readonly BindMount[]): string[] {
  return mounts.flatMap((m) => [m.readOnly ? '--ro-bind' : '--bind', m.source, m.target]);
}

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * The bwrap the runtime runs when a hand has mounts: for the sandbox's own call (the one with
 * `--unshare-pid`; the runtime's probes pass through) the binds go just before `--`, the command.
 */
export function mountsShim(nextBwrap: string, mounts: readonly BindMount[]): string {
  return `#!/bin/bash
# Written by the Paddock sandbox launcher (server/hands/sandbox/mount-binds.ts).
next=${quote(nextBwrap)}
sandbox=0
for a in "$@"; do [ "$a" = --unshare-pid ] && sandbox=1; done
[ $sandbox = 1 ] || exec "$next" "$@"
args=("$@"); n=\${#args[@]}; i=0
while [ $i -lt $n ] && [ "\${args[i]}" != -- ]; do i=$((i + 1)); done
[ $i -lt $n ] || { echo "sandbox-launcher: the sandbox runtime's bubblewrap call has no command separator" >&2; exit 70; }
exec "$next" "\${args[@]:0:i}" ${bindArgs(mounts).map(quote).join(' ')} "\${args[@]:i}"
`;
}
