import { spawn } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkspaceTools } from '~/lib/workspace-tools/file-tools';
import { MemoryToolFs } from '~/lib/workspace-tools/memory-tool-fs';
import type { ToolFs } from '~/lib/workspace-tools/tool-fs';
import type { ToolLimits } from '~/lib/workspace-tools/tool-limits';
import { nodeToolFs } from '~/server/hands/paddock-hand/node-tool-fs';
import { buildNativeExec } from '~/server/hands/sandbox/native-exec-build';
import { ExecClient } from '~/server/hands/sandbox/native-exec-client';
import { nativeToolFs } from '~/server/hands/sandbox/native-workspace';

// The file tools' one implementation over each kind of filesystem a hand has: a disk
// (paddock-hand) and a map in memory (the memory hand; the browser engines bring theirs). The
// same calls must give the same answers, word for word, whatever the hand.
const dirs: string[] = [];
const executors: ExecClient[] = [];
let execBinary = '';
beforeAll(async () => {
  execBinary = await buildNativeExec();
});
afterAll(() => {
  for (const e of executors) e.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const disk = () => {
  const root = realpathSync(mkdtempSync(path.join(tmpdir(), 'paddock-file-tools-')));
  dirs.push(root);
  return root;
};

const filesystems: [string, () => { fs: ToolFs; root: string }][] = [
  [
    'a disk',
    () => {
      const root = disk();
      return { fs: nodeToolFs(root), root };
    },
  ],
  [
    "a disk through a sandboxed hand's native executor",
    () => {
      const root = disk();
      const child = spawn(execBinary, [], { stdio: ['pipe', 'pipe', 'inherit'] });
      const exec = new ExecClient(child.stdin, child.stdout);
      executors.push(exec);
      return { fs: nativeToolFs(exec, root), root };
    },
  ],
  ['a map in memory', () => ({ fs: new MemoryToolFs(), root: '/workspace' })],
];

describe.each(filesystems)('the file tools on %s', (_name, place) => {
  const make = (limits?: Partial<ToolLimits>) => {
    const { fs, root } = place();
    return new WorkspaceTools(fs, root, limits);
  };
  it('writes creating folders, reads whole and by range, and keeps a byte-order mark', async () => {
    const t = make();
    expect(await t.write({ file_path: 'src/a.txt', content: '\uFEFFone\ntwo\nthree' })).toBe('wrote 16 bytes to src/a.txt');
    expect(await t.read({ file_path: 'src/a.txt', view_range: [2, -1] })).toBe('two\nthree');
    expect(await t.read({ file_path: './src/a.txt' })).toBe('\uFEFFone\ntwo\nthree');
  });

  it('edits one occurrence, refuses an ambiguous one, and replaces all when asked', async () => {
    const t = make();
    await t.write({ file_path: 'a.txt', content: 'x y x' });
    await expect(t.edit({ file_path: 'a.txt', old_string: 'x', new_string: 'z' })).rejects.toThrow('edit: old_string occurs 2 times in a.txt; include more context to make it unique, or set replace_all');
    expect(await t.edit({ file_path: 'a.txt', old_string: 'y', new_string: '$&' })).toBe('edited a.txt');
    expect(await t.edit({ file_path: 'a.txt', old_string: 'x', new_string: 'z', replace_all: true })).toBe('edited a.txt (2 replacements)');
    expect(await t.read({ file_path: 'a.txt' })).toBe('z $& z');
  });

  it('globs below a folder and skips node_modules unless the pattern names it', async () => {
    const t = make();
    await t.write({ file_path: 'src/a.ts', content: '' });
    await t.write({ file_path: 'src/b/c.ts', content: '' });
    await t.write({ file_path: 'node_modules/m/i.ts', content: '' });
    expect(await t.glob({ pattern: '**/*.ts' })).toBe('src/a.ts\nsrc/b/c.ts');
    expect(await t.glob({ pattern: '*.ts', path: 'src' })).toBe('src/a.ts');
    await expect(t.glob({ pattern: '*', path: 'src/a.ts' })).rejects.toThrow('glob: src/a.ts is not a folder');
    await expect(t.glob({ pattern: '*', path: 'nope' })).rejects.toThrow('glob: no such folder: nope');
  });

  it('greps line by line with paths and line numbers, and says when nothing matches', async () => {
    const t = make();
    await t.write({ file_path: 'b.txt', content: 'alpha\nbeta\n' });
    await t.write({ file_path: 'a.txt', content: 'gamma beta' });
    expect(await t.grep({ pattern: 'bet' })).toBe('a.txt:1: gamma beta\nb.txt:2: beta');
    expect(await t.grep({ pattern: 'zeta', path: 'b.txt' })).toBe('no matches for zeta');
    await expect(t.grep({ pattern: '(' })).rejects.toThrow(/^grep: invalid pattern/);
  });

  it.each([
    ['a path out of the workspace', { file_path: '../etc/passwd' }, 'path ../etc/passwd is outside the workspace'],
    ['a missing file', { file_path: 'gone.txt' }, 'read: no such file: gone.txt'],
    ['a folder', { file_path: 'src' }, 'read: src is a directory'],
  ])('refuses to read %s, naming it', async (_what, input, message) => {
    const t = make();
    await t.write({ file_path: 'src/x.txt', content: '' });
    await expect(t.read(input)).rejects.toThrow(message);
  });

  it('refuses to write the root, over a folder, or under a file', async () => {
    const t = make();
    await t.write({ file_path: 'f', content: '' });
    await t.write({ file_path: 'd/x', content: '' });
    await expect(t.write({ file_path: '.', content: '' })).rejects.toThrow('write: path . names the workspace root, not a file');
    await expect(t.write({ file_path: 'd', content: '' })).rejects.toThrow('write: d is a directory');
    await expect(t.write({ file_path: 'f/g', content: '' })).rejects.toThrow('write: a parent of f/g is not a directory');
  });

  it('refuses to read a file over the size limit, pointing at bash, and grep skips it', async () => {
    const t = make({ fileBytes: 4 });
    await t.write({ file_path: 'big.txt', content: '12345' });
    await expect(t.grep({ pattern: '1' })).resolves.toBe('no matches for 1');
    await expect(t.read({ file_path: 'big.txt' })).rejects.toThrow('read: big.txt is 5 bytes, over the 4-byte limit; use bash (head, sed -n) to look at parts of it');
  });
});
