import { describe, expect, it } from 'vitest';
import { MemoryHand } from '~/server/hands/memory-hand';
import { globToRegExp } from '~/lib/glob';

const ctx = { callId: 'c1', signal: new AbortController().signal };

describe('memory hand', () => {
  it('writes, reads a line range and edits a unique occurrence', async () => {
    const h = new MemoryHand('memory-1');
    await h.execute('write', { file_path: 'src/a.txt', content: 'one\ntwo\nthree' }, ctx);
    expect(await h.execute('read', { file_path: './src/a.txt', view_range: [2, 3] }, ctx)).toBe('two\nthree');
    await h.execute('edit', { file_path: 'src/a.txt', old_string: 'two', new_string: '2' }, ctx);
    expect(await h.execute('read', { file_path: 'src/a.txt' }, ctx)).toBe('one\n2\nthree');
  });

  it('refuses an edit whose old text is absent or not unique', async () => {
    const h = new MemoryHand('memory-1');
    await h.execute('write', { file_path: 'a', content: 'x x' }, ctx);
    await expect(h.execute('edit', { file_path: 'a', old_string: 'y', new_string: 'z' }, ctx)).rejects.toThrow(/not found/);
    await expect(h.execute('edit', { file_path: 'a', old_string: 'x', new_string: 'z' }, ctx)).rejects.toThrow('edit: old_string occurs 2 times in a; include more context to make it unique, or set replace_all');
  });

  it('refuses a path outside the workspace and names bad input', async () => {
    const h = new MemoryHand('memory-1');
    await expect(h.execute('write', { file_path: '../etc/passwd', content: '' }, ctx)).rejects.toThrow(/outside the workspace/);
    await expect(h.execute('write', { file_path: 'a' }, ctx)).rejects.toThrow(/content/);
  });

  it('globs and greps across files', async () => {
    const h = new MemoryHand('memory-1');
    await h.execute('write', { file_path: 'src/a.ts', content: 'const a = 1;\nexport { a };' }, ctx);
    await h.execute('write', { file_path: 'src/lib/b.ts', content: 'const b = 2;' }, ctx);
    await h.execute('write', { file_path: 'README.md', content: '# hi' }, ctx);
    expect(await h.execute('glob', { pattern: 'src/**/*.ts' }, ctx)).toBe('src/a.ts\nsrc/lib/b.ts');
    expect(await h.execute('grep', { pattern: 'const \\w', path: 'src/lib' }, ctx)).toBe('src/lib/b.ts:1: const b = 2;');
  });

  it('reads a view_range to the end with -1 and replaces every occurrence with replace_all', async () => {
    const h = new MemoryHand('memory-1');
    await h.execute('write', { file_path: 'a', content: 'x\ny\nx' }, ctx);
    expect(await h.execute('read', { file_path: 'a', view_range: [2, -1] }, ctx)).toBe('y\nx');
    await expect(h.execute('read', { file_path: 'a', view_range: [3, 2] }, ctx)).rejects.toThrow('read: view_range start 3 is after its end 2');
    expect(await h.execute('edit', { file_path: 'a', old_string: 'x', new_string: 'z', replace_all: true }, ctx)).toBe('edited a (2 replacements)');
    expect(await h.execute('read', { file_path: 'a' }, ctx)).toBe('z\ny\nz');
  });

  it('globs under a path, answering workspace-relative paths, and refuses a path outside the workspace', async () => {
    const h = new MemoryHand('memory-1');
    await h.execute('write', { file_path: 'src/lib/b.ts', content: '' }, ctx);
    await h.execute('write', { file_path: 'top.ts', content: '' }, ctx);
    expect(await h.execute('glob', { pattern: '**/*.ts', path: 'src' }, ctx)).toBe('src/lib/b.ts');
    expect(await h.execute('glob', { pattern: '*.ts', path: '.' }, ctx)).toBe('top.ts');
    await expect(h.execute('glob', { pattern: '*', path: '../' }, ctx)).rejects.toThrow(/outside the workspace/);
  });

  it("still takes Paddock's old input names, as calls stored before the rename carry them", async () => {
    const h = new MemoryHand('memory-1');
    await h.execute('write', { path: 'a', content: 'one\ntwo' }, ctx);
    expect(await h.execute('read', { path: 'a', start_line: 2 }, ctx)).toBe('two');
    await h.execute('edit', { path: 'a', old_text: 'two', new_text: '2' }, ctx);
    expect(await h.execute('read', { file_path: 'a' }, ctx)).toBe('one\n2');
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
