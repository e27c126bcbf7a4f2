import { z } from 'zod';
import { parseSandboxPolicy, type SandboxPolicy } from '~/server/hands/sandbox/policy';

/**
 * The wire between the server and a shared launcher (`sandbox-launcher --host`, launcher-host.ts),
 * one per network policy, all plain lines:
 *
 * - the server starts it with the policy's network in NETWORK_ENV; it answers `ready <socket>` on
 *   its stdout once its proxy listens;
 * - a hand: the server connects to `<socket>` and sends one JSON line (`HostRequest`); the launcher
 *   answers `ok` and that connection becomes the hand's stdin and stdout (the MCP wire, unchanged),
 *   or `error <message>` and closes it;
 * - on the launcher's stdout besides: `err <id> <JSON string>` (a hand's stderr) and
 *   `exit <id> <code>`; on its stdin: `kill <id>` (SIGTERM, then SIGKILL after a grace).
 *   Its stdin closing means the server is gone: every hand ends, then the launcher.
 * - a request with `serve` (the native executor): `argv` is the hand's resident executor
 *   (native/paddock-exec.c) on pipes of the launcher's, and the launcher itself serves the MCP wire
 *   on the connection, its tools done by that executor inside the sandbox (native-workspace.ts).
 *   `ok` comes once the executor has said hello from inside its sandbox.
 */

/** The hands' network policy, the one thing a shared launcher holds for all of its hands. */
export const NETWORK_ENV = 'PADDOCK_SANDBOX_NETWORK';

export type HandNetwork = Pick<SandboxPolicy, 'network' | 'allowedDomains'>;

/** The same network policy, in one spelling (the launchers' table key). */
export function networkKey(n: HandNetwork): string {
  return JSON.stringify({ network: n.network, allowedDomains: [...new Set(n.allowedDomains)].sort() });
}

export function parseNetwork(json: string | undefined): HandNetwork {
  const parsed = z
    .strictObject({ network: z.enum(['limited', 'unrestricted']), allowedDomains: z.array(z.string().min(1)) })
    .safeParse(json === undefined ? undefined : (JSON.parse(json) as unknown));
  if (!parsed.success) throw new Error(`${NETWORK_ENV} is not a network policy: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
  return parsed.data;
}

export interface HostRequest {
  /** The hand's id on this launcher (its stderr and exit lines carry it). */
  id: string;
  policy: SandboxPolicy;
  /** The command to run in the sandbox. */
  argv: string[];
  /** Variables for the command, on top of PATH, HOME, LANG, TERM, TMPDIR. */
  env: Record<string, string>;
  /** The launcher serves the MCP wire, `argv` being the native executor (see above). */
  serve?: ServeNative;
}

export interface ServeNative {
  /** The workspace (resolved inside the sandbox, by the executor). */
  root: string;
  /** paddock-hand's --memory-mb / --cpu-seconds per command; 0 = none. */
  memoryMb: number;
  cpuSeconds: number;
}

/** A request line is at most this long: a policy is a few KB. */
export const MAX_REQUEST_LINE = 1024 * 1024;

const RequestSchema = z.strictObject({
  id: z.string().regex(/^[\w.-]{1,128}$/, 'letters, digits, _ . - only'),
  policy: z.unknown(),
  argv: z.array(z.string()).min(1),
  env: z.record(z.string(), z.string()),
  serve: z
    .strictObject({
      root: z.string().regex(/^\/[^\0]*$/, 'must be an absolute path'),
      memoryMb: z.number().int().min(0),
      cpuSeconds: z.number().int().min(0),
    })
    .optional(),
});

/** Parses one request line; throws an Error naming what is wrong. */
export function parseHostRequest(line: string): HostRequest {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    throw new Error('the hand request is not valid JSON');
  }
  const parsed = RequestSchema.safeParse(raw);
  if (!parsed.success) throw new Error(`invalid hand request: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  const { serve, ...rest } = parsed.data;
  return { ...rest, ...(serve ? { serve } : {}), policy: parseSandboxPolicy(JSON.stringify(parsed.data.policy)) };
}
