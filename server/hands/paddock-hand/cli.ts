import { mkdirSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createPaddockHandServer, startHttpHandServer } from '~/server/hands/paddock-hand/server';
import { Workspace } from '~/server/hands/paddock-hand/tools';

/**
 * paddock-hand --workspace DIR (--stdio | --http PORT [--host H] [--token-file F] [--session-idle-minutes N])
 *
 * In stdio mode stdout is the protocol: everything else goes to stderr. In HTTP mode the token
 * comes from PADDOCK_HAND_TOKEN or --token-file (never the command line, where `ps` shows it),
 * and one JSON line `{"listening":URL}` on stdout tells a parent process the address (useful
 * with --http 0).
 */
const USAGE =
  'usage: paddock-hand --workspace DIR (--stdio | --http PORT [--host HOST] [--token-file FILE] [--session-idle-minutes N]) [--memory-mb N] [--cpu-seconds N]';

function log(message: string): void {
  process.stderr.write(`paddock-hand: ${message}\n`);
}

function fail(message: string): never {
  log(message);
  process.stderr.write(`${USAGE}\n`);
  process.exit(2);
}

function options() {
  try {
    return parseArgs({
      options: {
        workspace: { type: 'string' },
        stdio: { type: 'boolean' },
        http: { type: 'string' },
        host: { type: 'string' },
        'token-file': { type: 'string' },
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

function readToken(file: string | undefined): string {
  if (file === undefined) return process.env.PADDOCK_HAND_TOKEN?.trim() ?? '';
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (e) {
    return fail(`cannot read --token-file: ${(e as Error).message}`);
  }
}

async function main(): Promise<void> {
  const args = options();
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
  const token = readToken(args['token-file']);
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

main().catch((e: unknown) => {
  log(e instanceof Error ? (e.stack ?? e.message) : String(e));
  process.exit(1);
});
