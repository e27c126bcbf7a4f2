import fs from 'node:fs';
import path from 'node:path';
import { Script } from 'node:vm';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

const source = fs.readFileSync(path.join(import.meta.dirname, '..', 'public', 'embed.js'), 'utf8');

describe('the docs widget loader (public/embed.js)', () => {
  it('is small: at most 10 KB gzipped', () => {
    const size = gzipSync(source, { level: 9 }).byteLength;
    expect(size).toBeLessThanOrEqual(10 * 1024);
  });

  it('is plain script that defines one global and builds the frame URL from its own origin', () => {
    expect(() => new Script(source)).not.toThrow();
    expect(source.match(/window\.\w+\s*=/g)).toEqual(['window.PaddockWidget =']);
    expect(source).toContain("'/embed/' + agent + '?origin=' + encodeURIComponent(location.origin)");
    expect(source).not.toMatch(/\bimport\b|\brequire\(|document\.write/);
  });
});
