import 'server-only';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { ConfigError, loadConfig } from '~/server/config';
import { prepareDataDir } from '~/server/data-dir';
import { HEALTH_SERVICE } from '~/server/health';

/**
 * What `npm start` checks before the port is bound (scripts/check-start.ts), each mistake as ONE
 * line naming the setting and what to do: settings, the data dir, the port. Next itself listens
 * before it loads instrumentation.ts, so anything found only there comes after "Ready".
 */
export async function startProblem(env: Readonly<Record<string, string | undefined>>): Promise<string | null> {
  let dataDir: string;
  try {
    dataDir = loadConfig(env).dataDir;
  } catch (e) {
    return startFailureLine(e);
  }
  const port = portOf(env.PORT);
  if (port === null) return `paddock: invalid setting: PORT: must be a whole number from 1 to 65535 (e.g. PORT=3001 npm start)`;
  const dir = dataDirProblem(dataDir);
  if (dir) return dir;
  return portProblem(port, env.HOST || '127.0.0.1');
}

/** A start that failed, as one line: a setting's rule, or what else went wrong (no stack trace). */
export function startFailureLine(e: unknown): string {
  if (e instanceof ConfigError) return `paddock: ${e.message}`;
  const message = e instanceof Error ? e.message : String(e);
  return `paddock: cannot start: ${message.replace(/[\r\n]+/g, ' ')}`;
}

function portOf(v: string | undefined): number | null {
  if (v === undefined || v === '') return 3000;
  if (!/^\d{1,5}$/.test(v)) return null;
  const n = Number(v);
  return n >= 1 && n <= 65535 ? n : null;
}

/** The data dir must exist (it is made 0700) and take a file, or the first write would fail later. */
export function dataDirProblem(dir: string): string | null {
  const probe = path.join(dir, '.paddock-start-probe');
  try {
    prepareDataDir(dir);
    fs.writeFileSync(/*turbopackIgnore: true*/ probe, '', { mode: 0o600 });
    fs.rmSync(/*turbopackIgnore: true*/ probe, { force: true });
    return null;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    return `paddock: PADDOCK_DATA_DIR ${dir} cannot be written (${code}): give this user write access to it, or set PADDOCK_DATA_DIR to a folder it can write`;
  }
}

/** Whether the port can be bound; when it cannot, whose it is (Paddock answers /healthz) and what to do. */
export async function portProblem(port: number, host: string): Promise<string | null> {
  const err = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
    const server = net.createServer();
    server.once('error', (e: NodeJS.ErrnoException) => resolve(e));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(null)));
  });
  if (!err) return null;
  const other = port === 65535 ? port - 1 : port + 1;
  if (err.code === 'EADDRINUSE') {
    const url = `http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host}:${port}`;
    if (await answersAsPaddock(url)) {
      return `paddock: port ${port} is in use: Paddock is already running at ${url} (stop it first, or start another one with PORT=${other} and its own PADDOCK_DATA_DIR)`;
    }
    return `paddock: port ${port} on ${host} is in use by another program: start Paddock on another port with PORT=${other} npm start`;
  }
  if (err.code === 'EACCES') return `paddock: port ${port} needs privileges this user does not have: pick one above 1023, e.g. PORT=3000 npm start`;
  if (err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN') {
    return `paddock: invalid setting: HOST: ${host} is not an address of this machine: use 127.0.0.1 (the default), 0.0.0.0 for every interface, or one of its addresses`;
  }
  return `paddock: cannot listen on ${host}:${port} (${err.code ?? err.message})`;
}

async function answersAsPaddock(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1_500) });
    const body = (await res.json()) as { service?: unknown };
    return body.service === HEALTH_SERVICE;
  } catch {
    return false;
  }
}
