import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '~/server/config';
import { decodeMasterKeyText } from '~/lib/master-key-text';
import { loadMasterKey } from '~/server/vault/master-key';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'paddock-mk-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const HEX = 'ab'.repeat(32);
const B64 = Buffer.alloc(32, 7).toString('base64');

describe('the master key', () => {
  it('takes PADDOCK_MASTER_KEY as 64 hex characters or base64 of 32 bytes, and makes no key file then', () => {
    expect(decodeMasterKeyText(HEX)).toEqual(Buffer.alloc(32, 0xab));
    expect(decodeMasterKeyText(B64)).toEqual(Buffer.alloc(32, 7));
    expect(decodeMasterKeyText(Buffer.alloc(32, 7).toString('base64url'))).toEqual(Buffer.alloc(32, 7));
    const a = loadMasterKey({ value: HEX, dataDir: dir });
    expect(a.bytes).toEqual(Buffer.alloc(32, 0xab));
    expect(() => statSync(path.join(dir, 'master.key'))).toThrow();
  });

  it('refuses a malformed PADDOCK_MASTER_KEY at start, naming the setting and not echoing the value', () => {
    for (const bad of ['abc', 'ab'.repeat(31), Buffer.alloc(16).toString('base64'), Buffer.alloc(33).toString('base64'), `${HEX}zz`]) {
      expect(decodeMasterKeyText(bad)).toBeNull();
      let message = '';
      try {
        loadConfig({ PADDOCK_MASTER_KEY: bad });
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message).toMatch(/PADDOCK_MASTER_KEY: must be 32 bytes/);
      expect(message).not.toContain(bad);
    }
    expect(loadConfig({ PADDOCK_MASTER_KEY: B64 }).PADDOCK_MASTER_KEY).toBe(B64);
  });

  it('makes <dataDir>/master.key with mode 0600 on first use and reads the same key after', () => {
    const a = loadMasterKey({ dataDir: dir });
    const file = path.join(dir, 'master.key');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(decodeMasterKeyText(readFileSync(file, 'utf8'))).toEqual(a.bytes);
    expect(loadMasterKey({ dataDir: dir }).id).toBe(a.id);
  });

  it('refuses a key file others may read, or of the wrong length, naming the file', () => {
    const file = path.join(dir, 'master.key');
    writeFileSync(file, `${B64}\n`, { mode: 0o600 });
    chmodSync(file, 0o640);
    expect(() => loadMasterKey({ dataDir: dir })).toThrow(new RegExp(`${file}: the master key file must be readable by its owner only`));
    chmodSync(file, 0o600);
    expect(loadMasterKey({ dataDir: dir }).bytes).toEqual(Buffer.alloc(32, 7));
    writeFileSync(file, Buffer.alloc(16).toString('base64'));
    expect(() => loadMasterKey({ dataDir: dir })).toThrow(new RegExp(`${file}: not a master key`));
  });
});
