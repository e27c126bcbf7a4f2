import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkedTools } from '~/server/hands/sandbox/launch-steps';

/** The runtime's checks run once per server: a launcher handed what the check found skips its own. */
describe('checked tools', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-checked-tools-'));
  const tool = (name: string) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, '#!/bin/sh\n', { mode: 0o755 });
    return p;
  };
  const given = { bwrap: tool('bwrap'), socat: tool('socat'), rg: tool('rg'), setpriv: tool('setpriv') };

  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a launcher handed the server’s checked tools uses them without checking again', async () => {
    expect(await checkedTools(JSON.stringify(given))).toEqual(given);
  });

  it('checks as ever when a handed tool is gone, not executable, relative, or the value is not JSON', async () => {
    const ownCheck = await checkedTools(undefined);
    expect(ownCheck.bwrap).not.toBe(given.bwrap);
    fs.writeFileSync(path.join(dir, 'plain'), '');
    for (const bad of [
      JSON.stringify({ ...given, rg: path.join(dir, 'missing') }),
      JSON.stringify({ ...given, rg: path.join(dir, 'plain') }),
      JSON.stringify({ ...given, rg: 'rg' }),
      '{not json',
    ]) {
      expect(await checkedTools(bad)).toEqual(ownCheck);
    }
  });
});
