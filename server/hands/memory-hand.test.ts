import { describe, expect, it } from 'vitest';
import { MemoryHand } from '~/server/hands/memory-hand';
import { globToRegExp } from '~/lib/glob';

const ctx = { callId: 'c1', signal: new AbortController().signal };

describe('memory hand', () => {
  it('writes, reads a line range and edits a unique occurrence', async () => {
    const h = new MemoryHand('memory-1');
    await h.execute('write', { path: 'src/a.txt', content: 'one\ntwo\nthree' }, ctx);
    expect(await h.execute('read', { path: './src/a.txt', start_line: 2, end_line: 3 }, ctx)).toBe('two\nthree');
    await h.execute('edit', { path: 'src/a.txt', old_text: 'two', new_text: '2' }, ctx);
    expect(await h.execute('read', { path: 'src/a.txt' }, ctx)).toBe('one\n2\nthree');
  });

  it('refuses an edit whose old text is absent or not unique', async () => {
    const h = new MemoryHand('memory-1');
    await h.execute('write', { path: 'a', content: 'x x' }, ctx);
    await expect(h.execute('edit', { path: 'a', old_text: 'y', new_text: 'z' }, ctx)).rejects.toThrow(/not found/);
    await expect(h.execute('edit', { path: 'a', old_text: 'x', new_text: 'z' }, ctx)).rejects.toThrow(/more than once/);
  });

  it('refuses a path outside the workspace and names bad input', async () => {
    const h = new MemoryHand('memory-1');
    await expect(h.execute('write', { path: '../etc/passwd', content: '' }, ctx)).rejects.toThrow(/outside the workspace/);
    await expect(h.execute('write', { path: 'a' }, ctx)).rejects.toThrow(/content/);
  });

  it('globs and greps across files', async () => {
    const h = new MemoryHand('memory-1');
    await h.execute('write', { path: 'src/a.ts', content: 'const a = 1;\nexport { a };' }, ctx);
    await h.execute('write', { path: 'src/lib/b.ts', content: 'const b = 2;' }, ctx);
    await h.execute('write', { path: 'README.md', content: '# hi' }, ctx);
    expect(await h.execute('glob', { pattern: 'src/**/*.ts' }, ctx)).toBe('src/a.ts\nsrc/lib/b.ts');
    expect(await h.execute('grep', { pattern: 'const \\w', path: 'src/lib' }, ctx)).toBe('src/lib/b.ts:1: const b = 2;');
  });

  it('has no shell and says so', async () => {
    await expect(new MemoryHand('memory-1').execute('bash', { command: 'ls' }, ctx)).rejects.toThrow(/without a shell/);
  });
});

describe('globToRegExp', () => {
  it('matches stars, globstars and alternatives', () => {
    expect(globToRegExp('*.ts').test('a.ts')).toBe(true);
    expect(globToRegExp('*.ts').test('src/a.ts')).toBe(false);
    expect(globToRegExp('**/*.ts').test('a.ts')).toBe(true);
    expect(globToRegExp('**/*.{ts,md}').test('x/y/z.md')).toBe(true);
  });
});
