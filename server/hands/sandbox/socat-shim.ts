/**
 * The socat the sandbox runtime is given: the real one, started with PR_SET_PDEATHSIG=SIGKILL by
 * `setpriv`, so the kernel ends it the moment the launcher that started it dies, however it dies.
 *
 * The runtime spawns its host-side bridges (`UNIX-LISTEN:…,fork` to the proxy's port) as plain
 * children of the launcher and stops them only in its reset(). A launcher that is SIGKILLed (by the
 * OOM killer, by the MCP client's close after its grace, by a test) never gets there, and a
 * listening socat never exits by itself: it lived on under init, one per lost hand. Inside the
 * sandbox the same path starts the relays (the runtime binds the host's binaries in); there the
 * signal is redundant with the sandbox's pid namespace and harmless.
 */
const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

export function socatShim(setpriv: string, realSocat: string): string {
  return `#!/bin/sh
# Written by the Paddock sandbox launcher (server/hands/sandbox/socat-shim.ts).
exec ${quote(setpriv)} --pdeathsig KILL -- ${quote(realSocat)} "$@"
`;
}
