import { describe, expect, it } from 'vitest';
import { MasterKeyMismatchError, newMasterKey, open, rewrap, seal } from '~/server/vault/envelope';

describe('envelope encryption', () => {
  it('opens what it sealed, and the stored form holds neither the value nor the data key in the clear', () => {
    const master = newMasterKey();
    const canary = 'canary-7f3a9c2e-secret';
    const sealed = seal(master, canary, 'cred_1:token');
    expect(open(master, sealed, 'cred_1:token')).toBe(canary);
    const stored = JSON.stringify(sealed);
    expect(stored).not.toContain(canary);
    expect(stored).not.toContain(Buffer.from(canary).toString('base64'));
    expect(stored).not.toContain(master.bytes.toString('base64url'));
  });

  it('uses a fresh data key and IV per value: the same value seals differently twice', () => {
    const master = newMasterKey();
    const a = seal(master, 'same', 'c');
    const b = seal(master, 'same', 'c');
    expect(a.value).not.toBe(b.value);
    expect(a.wrappedKey).not.toBe(b.wrappedKey);
  });

  it('refuses another master key, a value moved to another row, and a tampered ciphertext, naming the problem', () => {
    const master = newMasterKey();
    const sealed = seal(master, 'v', 'cred_1:token');
    expect(() => open(newMasterKey(), sealed, 'cred_1:token')).toThrow(MasterKeyMismatchError);
    expect(() => open(master, sealed, 'cred_2:token')).toThrow(/another row/);
    const flipped = sealed.value.slice(0, -2) + (sealed.value.endsWith('A') ? 'BB' : 'AA');
    expect(() => open(master, { ...sealed, value: flipped }, 'cred_1:token')).toThrow(MasterKeyMismatchError);
  });

  it('re-wraps under a new master key without changing the value ciphertext; the old key no longer opens it', () => {
    const oldKey = newMasterKey();
    const newKey = newMasterKey();
    const sealed = seal(oldKey, 'rotate-me', 'c');
    const moved = rewrap(oldKey, newKey, sealed, 'c');
    expect(moved.value).toBe(sealed.value);
    expect(moved.masterKeyId).toBe(newKey.id);
    expect(open(newKey, moved, 'c')).toBe('rotate-me');
    expect(() => open(oldKey, moved, 'c')).toThrow(MasterKeyMismatchError);
  });
});
