import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Runs git (the TEST's, never the server's) with a clean config: no user settings, no prompts. */
export async function git(args: string[], cwd: string, env: Record<string, string> = {}): Promise<string> {
  const { stdout } = await run('git', args, {
    cwd,
    // A cast: Next's types make NODE_ENV required; a clean env has none.
    env: <Record<string, string>>{ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com', ...env } as NodeJS.ProcessEnv,
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

export interface GitServer {
  /** `https://127.0.0.1:<port>` */
  origin: string;
  /** The self-signed certificate (PEM): the git proxy's `upstreamCa` in tests. */
  ca: string;
  root: string;
  /** The token the server requires from now on. */
  setToken(token: string): void;
  /** Every Authorization header it was sent, in order (undefined: none). */
  authorizations: (string | undefined)[];
  /** Every Cookie header it was sent. */
  cookies: (string | undefined)[];
  /** Every Content-Encoding of a request body it was sent (git gzips large negotiations). */
  contentEncodings: (string | undefined)[];
  /** A bare repository `<name>.git` with one commit of `files` on `main`; returns its URL. */
  createRepo(name: string, files: Record<string, string>): Promise<string>;
  close(): Promise<void>;
}

/**
 * A real git host for tests: `git http-backend` (CGI) behind an HTTPS server on port 0 with a
 * self-signed certificate, over bare repositories in a temp dir, pushes enabled, and every request
 * refused with 401 unless it carries `Authorization: Basic x-access-token:<token>` as GitHub takes it.
 */
export async function startGitServer(initialToken: string): Promise<GitServer> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'paddock-git-server-'));
  await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', path.join(root, 'key.pem'), '-out', path.join(root, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1']);
  const { readFile, mkdir } = await import('node:fs/promises');
  const key = await readFile(path.join(root, 'key.pem'), 'utf8');
  const cert = await readFile(path.join(root, 'cert.pem'), 'utf8');
  const repos = path.join(root, 'repos');
  await mkdir(repos);
  let token = initialToken;
  const authorizations: (string | undefined)[] = [];
  const cookies: (string | undefined)[] = [];
  const contentEncodings: (string | undefined)[] = [];
  const sockets = new Set<Socket>();

  const server = https.createServer({ key, cert }, (req, res) => {
    authorizations.push(req.headers.authorization);
    cookies.push(req.headers.cookie);
    contentEncodings.push(req.headers['content-encoding']);
    // `/moved.git/…` has moved to another host: what a proxy must not follow.
    if (req.url?.startsWith('/moved.git/')) {
      req.resume();
      res.writeHead(301, { location: `https://elsewhere.example${req.url}`, 'set-cookie': 'tracking=1' }).end();
      return;
    }
    const expected = `Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`;
    if (req.headers.authorization !== expected) {
      req.resume();
      res.writeHead(401, { 'www-authenticate': 'Basic realm="test"', 'content-type': 'text/plain' }).end('unauthorized\n');
      return;
    }
    const u = new URL(req.url ?? '/', 'https://x');
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      GIT_PROJECT_ROOT: repos,
      GIT_HTTP_EXPORT_ALL: '1',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.receivepack',
      GIT_CONFIG_VALUE_0: 'true',
      HOME: root,
      PATH_INFO: decodeURIComponent(u.pathname),
      QUERY_STRING: u.search.slice(1),
      REQUEST_METHOD: req.method ?? 'GET',
      REMOTE_USER: 'x-access-token',
      REMOTE_ADDR: '127.0.0.1',
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      ...(req.headers['content-length'] ? { CONTENT_LENGTH: req.headers['content-length'] } : {}),
      ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: req.headers['content-encoding'] } : {}),
      ...(typeof req.headers['git-protocol'] === 'string' ? { GIT_PROTOCOL: req.headers['git-protocol'] } : {}),
    };
    const cgi = spawn('/usr/lib/git-core/git-http-backend', [], { env: env as NodeJS.ProcessEnv, stdio: ['pipe', 'pipe', 'ignore'] });
    req.pipe(cgi.stdin);
    cgi.stdin.on('error', () => undefined);
    let head = Buffer.alloc(0);
    let started = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (started) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const text = head.toString('latin1');
      const end = text.search(/\r?\n\r?\n/);
      if (end < 0) return;
      const sep = /\r?\n\r?\n/.exec(text.slice(end))![0].length;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of text.slice(0, end).split(/\r?\n/)) {
        const i = line.indexOf(':');
        if (i < 0) continue;
        const k = line.slice(0, i).trim().toLowerCase();
        const v = line.slice(i + 1).trim();
        if (k === 'status') status = Number.parseInt(v, 10);
        else headers[k] = v;
      }
      res.writeHead(status, headers);
      started = true;
      const rest = head.subarray(end + sep);
      if (rest.length > 0) res.write(rest);
    });
    cgi.on('close', () => {
      if (!started) res.writeHead(500).end();
      else res.end();
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    origin,
    ca: cert,
    root: repos,
    authorizations,
    cookies,
    contentEncodings,
    setToken: (t) => {
      token = t;
    },
    async createRepo(name, files) {
      const work = await mkdtemp(path.join(os.tmpdir(), 'paddock-git-seed-'));
      try {
        await git(['init', '-q', '-b', 'main'], work);
        for (const [f, content] of Object.entries(files)) await writeFile(path.join(work, f), content);
        await git(['add', '-A'], work);
        await git(['commit', '-q', '-m', 'first'], work);
        await git(['clone', '-q', '--bare', work, path.join(repos, `${name}.git`)], root);
      } finally {
        await rm(work, { recursive: true, force: true });
      }
      return `${origin}/${name}.git`;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(root, { recursive: true, force: true });
    },
  };
}
