import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script (run by npm before TypeScript is involved), no declarations
import { unsupportedNodeMessage } from './check-node.mjs';

const message = unsupportedNodeMessage as (version: string) => string | null;

describe('the Node version check', () => {
  it('refuses Node 20 and 22 before 22.13, naming the versions Paddock needs and the way to get one', () => {
    for (const v of ['20.20.2', 'v20.19.0', '18.20.0', '22.12.0', '21.7.3', '23.11.0']) {
      const m = message(v);
      expect(m, v).toContain(`Node.js ${v.replace(/^v/, '')} cannot run Paddock`);
      expect(m).toContain('22 (22.13 or newer) or 24');
      expect(m).toContain('./paddock start');
    }
  });

  it('accepts 22.13 and newer 22s, 24 and later', () => {
    for (const v of ['22.13.0', '22.23.5', 'v24.0.0', '24.11.1', '26.0.0']) expect(message(v), v).toBeNull();
  });

  it('agrees with the engines field in package.json', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', 'package.json'), 'utf8')) as { engines: { node: string } };
    expect(pkg.engines.node).toBe('^22.13.0 || >=24');
  });

  // The machine's own Node, when it is an old one (as on the CI machine): `npm start` stops at once.
  const systemNode = '/usr/bin/node';
  const systemMajor = fs.existsSync(systemNode) ? Number(spawnSync(systemNode, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).stdout.trim()) : 0;
  it.runIf(systemMajor > 0 && systemMajor < 22)('stops `npm start` on the machine’s older Node with the message and exit code 1, before building anything', () => {
    const r = spawnSync(systemNode, [path.join(import.meta.dirname, 'start.mjs')], { encoding: 'utf8', timeout: 10_000, env: { ...process.env, PORT: '1' } });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('cannot run Paddock');
    expect(r.stdout).not.toContain('building');
  });
});
