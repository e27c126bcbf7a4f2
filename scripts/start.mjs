// `npm start`: build when the build is missing or older than the sources, then serve on :3000.
import { spawnSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const buildId = path.join(root, '.next', 'BUILD_ID');
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1' };
const next = path.join(root, 'node_modules', 'next', 'dist', 'bin', 'next');

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
console.log(`paddock: starting on http://localhost:${port} (data in ${process.env.PADDOCK_DATA_DIR ?? './.paddock'})`);
const child = spawn(process.execPath, [next, 'start', '-p', port], { cwd: root, env, stdio: 'inherit' });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code) => process.exit(code ?? 0));
