// `npm start`: check the settings and the port, build when the build is missing or older than the sources, then serve on :3000.
import { spawnSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { exitUnlessSupported } from './check-node.mjs';

exitUnlessSupported();

const root = path.resolve(import.meta.dirname, '..');
const buildId = path.join(root, '.next', 'BUILD_ID');
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1' };
const next = path.join(root, 'node_modules', 'next', 'dist', 'bin', 'next');

// Settings, data dir and port, before building or listening: each mistake is one line and a non-zero exit
// (Next binds the port before it loads instrumentation.ts, so a bad setting found there comes after "Ready").
const check = spawnSync(process.execPath, ['--conditions=react-server', '--import', 'tsx', path.join(root, 'scripts', 'check-start.ts')], { cwd: root, env, stdio: 'inherit' });
if (check.status !== 0) process.exit(check.status ?? 1);

function newestMtime(p) {
  let st;
  try {
    st = fs.statSync(p);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.mtimeMs;
  let max = st.mtimeMs;
  for (const name of fs.readdirSync(p)) max = Math.max(max, newestMtime(path.join(p, name)));
  return max;
}

const sources = ['app', 'server', 'lib', 'public', 'instrumentation.ts', 'next.config.ts', 'package-lock.json'].map((p) => path.join(root, p));
const built = fs.existsSync(buildId) ? fs.statSync(buildId).mtimeMs : 0;
if (built < Math.max(...sources.map(newestMtime))) {
  console.log('paddock: building (first start or sources changed)…');
  const r = spawnSync(process.execPath, [next, 'build'], { cwd: root, env, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const port = process.env.PORT ?? '3000';
// Loopback unless told otherwise: a Paddock runs commands, so nobody else on the network should reach it by accident.
const host = process.env.HOST ?? '127.0.0.1';
const shown = host === '127.0.0.1' || host === '::1' ? 'localhost' : host === '0.0.0.0' || host === '::' ? 'this machine' : host;
console.log(`paddock: starting on http://${shown}:${port} (listening on ${host}; data in ${process.env.PADDOCK_DATA_DIR ?? './.paddock'})`);
if (host !== '127.0.0.1' && host !== '::1' && host !== 'localhost' && !process.env.PADDOCK_PUBLIC_URL && !process.env.PADDOCK_ALLOWED_HOSTS) {
  console.log('paddock: HOST is not loopback: set PADDOCK_PUBLIC_URL (or PADDOCK_ALLOWED_HOSTS) to the address people use, or requests by that name are refused');
}
const child = spawn(process.execPath, [next, 'start', '-p', port, '-H', host], { cwd: root, env: { ...env, PORT: port }, stdio: 'inherit' });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code) => process.exit(code ?? 0));
