import { closeSync, mkdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { type WorkerHands, plainWorkerHands, runHandWorker } from '~/server/hands/paddock-hand/worker';

/**
 * paddock-hand worker --environment ENV_ID --url PADDOCK_URL [--workspace DIR] [--key-file F] [--worker-id ID]
 *
 * Puts this machine's hands on a self-hosted environment: polls its work queue and runs its
 * sessions' tool calls here. The environment key comes from --key-file, or PADDOCK_ENVIRONMENT_KEY
 * (through bin/paddock-hand, which moves it off the environment onto fd 3: `--key-fd`), never the
 * command line.
 */
export const WORKER_USAGE =
  'usage: paddock-hand worker --environment ENV_ID --url PADDOCK_URL [--workspace DIR] [--key-file FILE] [--worker-id ID] [--memory-mb N] [--cpu-seconds N] [--network none|unrestricted] [--unsandboxed]\n  (the environment key: --key-file, or PADDOCK_ENVIRONMENT_KEY through bin/paddock-hand; each session runs in a sandbox hand of its own unless --unsandboxed)';

function fail(message: string): never {
  process.stderr.write(`paddock-hand worker: ${message}\n${WORKER_USAGE}\n`);
  process.exit(2);
}

function readKey(file: string | undefined, fd: string | undefined): string {
  if (fd !== undefined) {
    const n = Number(fd);
    if (!Number.isInteger(n) || n < 3) fail(`--key-fd needs a file descriptor number of 3 or more, not ${fd}`);
    try {
      return readFileSync(n, 'utf8').trim();
    } finally {
      try {
        closeSync(n);
      } catch {
        // already closed
      }
    }
  }
  if (file !== undefined) {
    try {
      return readFileSync(file, 'utf8').trim();
    } catch (e) {
      return fail(`cannot read --key-file: ${(e as Error).message}`);
    }
  }
  const key = process.env.PADDOCK_ENVIRONMENT_KEY?.trim() ?? '';
  delete process.env.PADDOCK_ENVIRONMENT_KEY;
  return key;
}

export async function workerMain(argv: string[]): Promise<void> {
  let args;
  try {
    args = parseArgs({
      args: argv,
      options: {
        environment: { type: 'string' },
        url: { type: 'string' },
        workspace: { type: 'string' },
        'key-file': { type: 'string' },
        'key-fd': { type: 'string' },
        'worker-id': { type: 'string' },
        'memory-mb': { type: 'string' },
        'cpu-seconds': { type: 'string' },
        network: { type: 'string' },
        unsandboxed: { type: 'boolean' },
        help: { type: 'boolean' },
      },
      strict: true,
    }).values;
  } catch (e) {
    return fail((e as Error).message);
  }
  const key = readKey(args['key-file'], args['key-fd']);
  if (args.help) {
    process.stderr.write(`${WORKER_USAGE}\n`);
    return;
  }
  const url = args.url ?? process.env.PADDOCK_URL;
  if (!args.environment) fail('--environment is required');
  if (!url) fail('--url (or PADDOCK_URL) is required: the address of your Paddock');
  if (!key.startsWith('pdek_')) fail("no environment key: make one on the environment's page and pass --key-file (or PADDOCK_ENVIRONMENT_KEY)");
  const num = (flag: 'memory-mb' | 'cpu-seconds'): number => {
    const v = args[flag];
    const n = v === undefined ? 0 : Number(v);
    if (!Number.isInteger(n) || n < 0) fail(`--${flag} needs a non-negative whole number, not ${v}`);
    return n;
  };
  const network = args.network ?? 'none';
  if (network !== 'none' && network !== 'unrestricted') fail(`--network is none or unrestricted, not ${network}`);
  const root = path.resolve(args.workspace ?? 'paddock-worker');
  mkdirSync(root, { recursive: true });
  const hands = await workerHands({ root, unsandboxed: args.unsandboxed === true, network, memoryMb: num('memory-mb'), cpuSeconds: num('cpu-seconds') });
  const stop = new AbortController();
  process.once('SIGTERM', () => stop.abort());
  process.once('SIGINT', () => stop.abort());
  const workerId = args['worker-id'] ?? `${hostname()}-${randomUUID().slice(0, 8)}`;
  process.stderr.write(`paddock-hand worker ${workerId}: polling environment ${args.environment} at ${url}; sessions' workspaces under ${root}${args.unsandboxed ? ', UNSANDBOXED' : `, each in a sandbox (network: ${network})`}\n`);
  await runHandWorker({ baseURL: url.replace(/\/+$/, ''), environmentId: args.environment, environmentKey: key, root, workerId, hands, signal: stop.signal });
}

/** A sandbox hand per session (the server's own kind), or with --unsandboxed the plain folders. */
async function workerHands(o: { root: string; unsandboxed: boolean; network: 'none' | 'unrestricted'; memoryMb: number; cpuSeconds: number }): Promise<WorkerHands> {
  const set = (n: number) => (n > 0 ? n : undefined);
  if (o.unsandboxed) return plainWorkerHands(o.root, { memoryMb: o.memoryMb, cpuSeconds: o.cpuSeconds });
  // Loaded only here: the sandbox's modules are the server's (bin/paddock-hand.mjs runs a worker with their conditions).
  // The sandbox's launcher and the hands' code are found from Paddock's checkout, as on the server.
  const codeRoot = fileURLToPath(new URL('../../../', import.meta.url));
  process.chdir(codeRoot);
  const { sandboxWorkerHands } = await import('~/server/hands/sandbox/worker-hands');
  const { checkSandboxAvailable } = await import('~/server/hands/sandbox/spawn-sandboxed');
  const check = await checkSandboxAvailable();
  if (!check.ok) fail(`this machine cannot sandbox hands: ${check.missing} (install it, or run with --unsandboxed at your own risk)`);
  const limits = { ...(set(o.memoryMb) ? { memoryMb: o.memoryMb } : {}), ...(set(o.cpuSeconds) ? { cpuSeconds: o.cpuSeconds } : {}) };
  return sandboxWorkerHands({ root: o.root, codeRoot, limits, ...(o.network === 'unrestricted' ? { network: 'unrestricted' as const } : {}) });
}
