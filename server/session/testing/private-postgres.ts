import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * A throwaway PostgreSQL cluster of its own (initdb into a temp dir, trust auth, 127.0.0.1 on a
 * free port, its unix socket in the temp dir) that a test may stop, restart and crash at will.
 * The shared server on 127.0.0.1:5432 (pg-test-db.ts) must never be stopped: other test files use
 * it in parallel. initdb and postgres refuse to run as root, so as root they run as the `postgres`
 * OS user (runuser) in a temp dir owned by it.
 *
 * fsync is off (the OS is not what a test crashes) but synchronous_commit stays on, so a commit
 * acknowledged to a client survives even an immediate (crash-like) shutdown.
 */
export interface PrivatePostgres {
  readonly port: number;
  /** The temp dir: data in `data/`, the unix socket, `postgres.log`. */
  readonly dir: string;
  /** Whether the server is up, as far as this helper started or stopped it. */
  readonly running: boolean;
  /** How long initdb and the first start took, in ms. */
  readonly timings: { initdbMs: number; startMs: number };
  /** postgres://postgres@127.0.0.1:PORT/<database>; the cluster is private, so `postgres` is fine. */
  url(database?: string): string;
  start(): Promise<void>;
  /** `fast` disconnects clients and shuts down cleanly; `immediate` is a crash (recovery on start). */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  restart(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Stops the server (immediate) and removes the temp dir. */
  cleanup(): Promise<void>;
  /** The end of the server's log, for failure messages. */
  logTail(lines?: number): string;
}

const PG_ROOT = '/usr/lib/postgresql';
const TOOLS = ['initdb', 'pg_ctl', 'postgres'] as const;
const OS_USER = 'postgres';

/** Clusters still running, stopped if the process exits without cleanup(). */
const live = new Set<{ binDir: string; dataDir: string; dir: string }>();
let exitHookInstalled = false;

/** Finds the newest installed server's bin dir (PADDOCK_PG_BIN overrides), naming what is missing. */
export function findPostgresBinDir(): string {
  const override = process.env.PADDOCK_PG_BIN;
  const candidates = override
    ? [override]
    : (fs.existsSync(PG_ROOT) ? fs.readdirSync(PG_ROOT) : [])
        .filter((v) => /^\d+(\.\d+)?$/.test(v))
        .sort((a, b) => Number(b) - Number(a))
        .map((v) => path.join(PG_ROOT, v, 'bin'));
  for (const dir of candidates) {
    if (TOOLS.every((t) => fs.existsSync(path.join(dir, t)))) return dir;
  }
  const where = override ? `PADDOCK_PG_BIN=${override}` : `${PG_ROOT}/<version>/bin`;
  throw new Error(
    `PostgreSQL server binaries (${TOOLS.join(', ')}) not found in ${where}. ` +
      "Install Debian's postgresql (apt-get install postgresql, or bash scripts/ensure-postgres.sh), or set PADDOCK_PG_BIN to a bin dir holding them.",
  );
}

export async function createPrivatePostgres(opts: { start?: boolean } = {}): Promise<PrivatePostgres> {
  const binDir = findPostgresBinDir();
  const asRoot = process.getuid?.() === 0;
  const owner = asRoot ? osUser() : null;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-pg-'));
  const dataDir = path.join(dir, 'data');
  const logFile = path.join(dir, 'postgres.log');
  if (owner) fs.chownSync(dir, owner.uid, owner.gid);

  const run = (tool: (typeof TOOLS)[number], args: string[]) => runTool(binDir, tool, args, { cwd: dir, asRoot });
  const port = await freePort();
  const timings = { initdbMs: 0, startMs: 0 };
  const cluster = { binDir, dataDir, dir };
  let running = false;

  try {
    const t0 = performance.now();
    await run('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '--encoding=UTF8', '--locale=C', '--no-instructions']);
    timings.initdbMs = Math.round(performance.now() - t0);
  } catch (e) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  // In postgresql.conf, not on the command line: a restart keeps them.
  fs.appendFileSync(
    path.join(dataDir, 'postgresql.conf'),
    [
      '',
      '# paddock private-postgres',
      "listen_addresses = '127.0.0.1'",
      `port = ${port}`,
      `unix_socket_directories = '${dir}'`,
      'fsync = off',
      'full_page_writes = off',
      'max_connections = 60',
      'shared_buffers = 16MB',
      'log_min_messages = warning',
      '',
    ].join('\n'),
  );

  const pgCtl = async (args: string[]) => {
    try {
      await run('pg_ctl', ['-D', dataDir, '-w', '-t', '30', ...args]);
    } catch (e) {
      throw new Error(`${(e as Error).message}\n--- postgres.log ---\n${tail(logFile, 20)}`, { cause: e });
    }
  };

  const self: PrivatePostgres = {
    port,
    dir,
    timings,
    get running() {
      return running;
    },
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async start() {
      if (running) return;
      await pgCtl(['-l', logFile, 'start']);
      running = true;
      live.add(cluster);
      installExitHook();
    },
    async stop(mode = 'fast') {
      if (!running) return;
      await pgCtl(['-m', mode, 'stop']);
      running = false;
      live.delete(cluster);
    },
    async restart(mode = 'fast') {
      await self.stop(mode);
      await self.start();
    },
    async cleanup() {
      try {
        await self.stop('immediate');
      } finally {
        live.delete(cluster);
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
    logTail: (lines = 40) => tail(logFile, lines),
  };

  if (opts.start ?? true) {
    const t0 = performance.now();
    try {
      await self.start();
    } catch (e) {
      fs.rmSync(dir, { recursive: true, force: true });
      throw e;
    }
    timings.startMs = Math.round(performance.now() - t0);
  }
  return self;
}

function osUser(): { uid: number; gid: number } {
  const id = (flag: string) => spawnSync('id', [flag, OS_USER], { encoding: 'utf8' });
  const uid = id('-u');
  const gid = id('-g');
  if (uid.status !== 0 || gid.status !== 0) {
    throw new Error(`running as root, PostgreSQL needs the '${OS_USER}' OS user (initdb and postgres refuse root), and there is none: install Debian's postgresql`);
  }
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

function runTool(binDir: string, tool: string, args: string[], o: { cwd: string; asRoot: boolean }): Promise<void> {
  const exe = path.join(binDir, tool);
  const [file, argv] = o.asRoot ? ['runuser', ['-u', OS_USER, '--', exe, ...args]] : [exe, args];
  return new Promise((resolve, reject) => {
    execFile(file, argv, { cwd: o.cwd, timeout: 60_000, env: { ...process.env, LC_ALL: 'C' } }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${tool} ${args.join(' ')} failed: ${err.message}\n${stderr || stdout}`.trim(), { cause: err }));
      else resolve();
    });
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function tail(file: string, lines: number): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines - 1).join('\n');
  } catch {
    return '(no log)';
  }
}

/** A test that dies before cleanup() must not leave a postgres running (or its temp dir). */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    const asRoot = process.getuid?.() === 0;
    for (const c of live) {
      const exe = path.join(c.binDir, 'pg_ctl');
      const args = ['-D', c.dataDir, '-m', 'immediate', '-w', 'stop'];
      spawnSync(asRoot ? 'runuser' : exe, asRoot ? ['-u', OS_USER, '--', exe, ...args] : args, { cwd: c.dir, stdio: 'ignore', timeout: 10_000 });
      fs.rmSync(c.dir, { recursive: true, force: true });
    }
    live.clear();
  });
}
