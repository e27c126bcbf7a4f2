import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';

/** `@modelcontextprotocol/server-everything` over Streamable HTTP on a free port: a real MCP server nobody here wrote. */
export interface EverythingServer {
  /** Its base URL (the MCP endpoint is `${base}/mcp`). */
  base: string;
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

export async function startEverythingServer(): Promise<EverythingServer> {
  const port = await freePort();
  const entry = path.join(process.cwd(), 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
  const child: ChildProcess = spawn(process.execPath, [entry, 'streamableHttp'], { env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`server-everything did not start: ${out}`)), 15_000);
    const onData = (d: Buffer) => {
      out += String(d);
      if (/listening on port/i.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server-everything exited (${code}): ${out}`));
    });
  });
  // Keep draining its output so it never blocks on a full pipe.
  child.stdout!.resume();
  child.stderr!.resume();
  return {
    base: `http://127.0.0.1:${port}`,
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
