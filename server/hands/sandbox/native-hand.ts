import type { ChildProcess } from 'node:child_process';
import type net from 'node:net';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createPaddockHandServer } from '~/server/hands/paddock-hand/server';
import type { ServeNative } from '~/server/hands/sandbox/host-wire';
import { ExecClient } from '~/server/hands/sandbox/native-exec-client';
import { NativeWorkspace } from '~/server/hands/sandbox/native-workspace';

/** An executor that has not said hello by then is taken as failed (the sandbox did not come up). */
const HELLO_TIMEOUT_MS = 30_000;

/**
 * One native hand on a shared launcher: `child` is its sandbox with the resident executor on its
 * stdin and stdout; this process serves the MCP wire on `conn` (what paddock-hand did inside the
 * sandbox), every file and command done by the executor. Resolves once the hand serves, after `ok`;
 * throws (conn untouched) when the executor never said hello.
 */
export async function serveNativeHand(conn: net.Socket, child: ChildProcess, serve: ServeNative): Promise<void> {
  const exec = new ExecClient(child.stdin!, child.stdout!);
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString('utf8')).slice(-2048)));
  child.once('exit', () => exec.end(new Error('the hand executor exited')));
  const timer = setTimeout(() => {
    exec.end(new Error(`the hand executor did not start in ${HELLO_TIMEOUT_MS / 1000} s`));
    child.kill('SIGKILL');
  }, HELLO_TIMEOUT_MS);
  try {
    await exec.hello;
  } catch (e) {
    throw new Error(`${(e as Error).message}${stderr.trim() ? `: ${stderr.trim()}` : ''}`, { cause: e });
  } finally {
    clearTimeout(timer);
  }
  // The root as the sandbox resolves it (as paddock-hand's realpath did there), never the host's view.
  const root = await exec.realpath(serve.root);
  conn.write('ok\n');
  const tools = new NativeWorkspace(exec, root, { memoryMb: serve.memoryMb, cpuSeconds: serve.cpuSeconds });
  const server = createPaddockHandServer({ workspace: tools });
  // The server closing its end is how the hand ends: the executor's input closes, it kills what it
  // started and exits, and its sandbox with it. The executor gone first: the server sees the hand lost.
  conn.once('close', () => {
    void server.close();
    tools.dispose();
  });
  // The executor gone (killed, out of memory) is the hand lost, not a failed call: the connection
  // ends before a pending call could be answered with the executor's error, so the server sees it.
  exec.onEnd(() => conn.destroy());
  child.once('exit', () => conn.destroy());
  if (child.exitCode !== null || child.signalCode !== null) conn.destroy();
  await server.connect(new StdioServerTransport(conn, conn));
  conn.resume(); // paused while its request line was read: a new 'data' listener does not undo that
}
