import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildHandBundle } from '~/server/hands/paddock-hand/bundle';

let dir: string;
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("paddock-hand's bundle", () => {
  it('is built once per source, under a content-hash name, readable by all and writable by no one else', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-bundle-'));
    const out = path.join(dir, 'dist');
    const [a, b] = await Promise.all([buildHandBundle(process.cwd(), out), buildHandBundle(process.cwd(), out)]);
    expect(a).toBe(b);
    expect(path.basename(a)).toMatch(/^paddock-hand-[0-9a-f]{16}\.mjs$/);
    expect(fs.statSync(a).mode & 0o777).toBe(0o644);
    expect(fs.readdirSync(out)).toEqual([path.basename(a)]);
  }, 60_000);

  it('refuses a folder that others can write to', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-bundle-'));
    fs.chmodSync(dir, 0o777);
    await expect(buildHandBundle(process.cwd(), dir)).rejects.toThrow(/refusing to use/);
  });
});
