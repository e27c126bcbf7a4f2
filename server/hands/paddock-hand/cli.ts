import { closeSync, mkdirSync, readFileSync, unlinkSync } from 'node:fs';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createPaddockHandServer, startHttpHandServer } from '~/server/hands/paddock-hand/server';
import { Workspace } from '~/server/hands/paddock-hand/tools';

/**
 * paddock-hand --workspace DIR (--stdio | --http PORT [--host H] [--token-file F] [--session-idle-minutes N])
 *
 * In stdio mode stdout is the protocol: everything else goes to stderr. In HTTP mode the token
 * comes from PADDOCK_HAND_TOKEN (through `bin/paddock-hand`, which moves it off the environment
 * onto fd 3: `--token-fd`), or --token-file (read, then deleted) — never the command line, where
 * `ps` shows it. Either way it is gone from every place the hand's own commands could read it
 * before the first tool runs. One JSON line `{"listening":URL}` on stdout tells a parent process
 * the address (useful with --http 0).
 */
const USAGE =
  'usage: paddock-hand --workspace DIR (--stdio | --http PORT [--host HOST] [--token-file FILE] [--session-idle-minutes N]) [--memory-mb N] [--cpu-seconds N]\n  (PADDOCK_HAND_TOKEN: start through bin/paddock-hand, which keeps it out of the environment)';

function log(message: string): void {
  process.stderr.write(`paddock-hand: ${message}\n`);
}

function fail(message: string): never {
  log(message);
  process.stderr.write(`${USAGE}\n`);
  process.exit(2);
}

/**
 * Started from a V8 startup snapshot (bundle.ts): `node --snapshot-blob B -- ARGS` has no script in
 * its argv. Set while the snapshot is built, so the restored heap has it.
 */
let fromSnapshot = false;

function options() {
  try {
    return parseArgs({
      args: process.argv.slice(fromSnapshot ? 1 : 2),
      options: {
        workspace: { type: 'string' },
        stdio: { type: 'boolean' },
        http: { type: 'string' },
        host: { type: 'string' },
        'token-file': { type: 'string' },
        'token-fd': { type: 'string' },
        'memory-mb': { type: 'string' },
        'cpu-seconds': { type: 'string' },
        'session-idle-minutes': { type: 'string' },
        help: { type: 'boolean' },
      },
      strict: true,
    }).values;
  } catch (e) {
    return fail((e as Error).message);
  }
}

/** Runs `stop` once on SIGTERM/SIGINT (and whatever else calls the returned function), then exits. */
function onShutdown(stop: () => Promise<void>): () => void {
  let stopping = false;
  const shutdown = () => {
    if (stopping) return;
    stopping = true;
    // Never hang on the way out: a stuck close must not keep the process alive.
    setTimeout(() => process.exit(0), 5000).unref();
    stop()
      .catch((e: unknown) => log(`error while stopping: ${String(e)}`))
      .finally(() => process.exit(0));
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
  return shutdown;
}

/**
 * The bearer token, taken out of every place a command run by this hand could read it: fd 3
 * closed, the file deleted, the variable dropped from our env (the kernel's copy of a variable
 * node started with stays in /proc/self/environ: hence the warning, and bin/paddock-hand).
 */
function readToken(file: string | undefined, fd: string | undefined): string {
  if (fd !== undefined) {
    const n = Number(fd);
    if (!Number.isInteger(n) || n < 3) fail(`--token-fd needs a file descriptor number of 3 or more, not ${fd}`);
    try {
      return readFileSync(n, 'utf8').trim();
    } catch (e) {
      return fail(`cannot read the token from fd ${n}: ${(e as Error).message}`);
    } finally {
      try {
        closeSync(n);
      } catch {
        // already closed
      }
    }
  }
  if (file !== undefined) {
    let token: string;
    try {
      token = readFileSync(file, 'utf8').trim();
    } catch (e) {
      return fail(`cannot read --token-file: ${(e as Error).message}`);
    }
    try {
      unlinkSync(file);
    } catch (e) {
      log(`warning: could not delete --token-file after reading it (${(e as NodeJS.ErrnoException).code}): commands run by this hand can read it`);
    }
    return token;
  }
  const token = process.env.PADDOCK_HAND_TOKEN?.trim() ?? '';
  if (token !== '') {
    delete process.env.PADDOCK_HAND_TOKEN;
    log('warning: PADDOCK_HAND_TOKEN is in this process\'s environment, which its commands can read in /proc; start it with bin/paddock-hand or --token-file');
  }
  return token;
}

async function main(): Promise<void> {
  const args = options();
  // First, whatever the mode: nothing may start while the token is still readable.
  const token = readToken(args['token-file'], args['token-fd']);
  if (args.help) {
    process.stderr.write(`${USAGE}\n`);
    return;
  }
  if (!args.workspace) fail('--workspace is required');
  if (Boolean(args.stdio) === (args.http !== undefined)) fail('give exactly one of --stdio or --http PORT');
  mkdirSync(args.workspace, { recursive: true });
  const limit = (flag: 'memory-mb' | 'cpu-seconds' | 'session-idle-minutes'): number => {
    const v = args[flag];
    if (v === undefined) return 0;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) fail(`--${flag} needs a non-negative whole number, not ${v}`);
    return n;
  };
  const workspace = new Workspace(args.workspace, { memoryMb: limit('memory-mb'), cpuSeconds: limit('cpu-seconds') });

  if (args.stdio) {
    const server = createPaddockHandServer({ workspace });
    const shutdown = onShutdown(async () => {
      await server.close();
      workspace.dispose();
    });
    // The parent closing our stdin is how a stdio MCP client says goodbye.
    process.stdin.once('end', shutdown);
    process.stdin.once('close', shutdown);
    await server.connect(new StdioServerTransport());
    log(`serving ${workspace.root} over stdio`);
    return;
  }

  const port = Number(args.http);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--http needs a port number, not ${args.http}`);
  if (token === '') fail('refusing to serve HTTP without a token: set PADDOCK_HAND_TOKEN or pass --token-file');
  // An MCP session of a client that vanished (a crashed Paddock) is closed once idle this long
  // (default 30); its running calls are kept for the client's successor either way.
  const idleMinutes = args['session-idle-minutes'] === undefined ? 30 : limit('session-idle-minutes');
  if (idleMinutes < 1) fail('--session-idle-minutes needs at least 1');
  const hand = await startHttpHandServer({ workspace, port, host: args.host ?? '127.0.0.1', token, sessionIdleMs: idleMinutes * 60_000 });
  onShutdown(() => hand.close());
  process.stdout.write(`${JSON.stringify({ listening: hand.url })}\n`);
  log(`serving ${workspace.root} at ${hand.url}`);
}

function start(): void {
  main().catch((e: unknown) => {
    log(e instanceof Error ? (e.stack ?? e.message) : String(e));
    process.exit(1);
  });
}

// Building the snapshot loads every module and runs nothing: each hand then starts from that heap.
if (v8.startupSnapshot.isBuildingSnapshot()) {
  fromSnapshot = true;
  v8.startupSnapshot.setDeserializeMainFunction(start);
} else {
  start();
}
