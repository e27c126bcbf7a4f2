import { mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runTool, Workspace } from '~/server/hands/paddock-hand/tools';
import { eventually, running } from '~/server/hands/testing/processes';

let base: string;
let root: string;
let outside: string;
let ws: Workspace;

beforeEach(() => {
  base = mkdtempSync(path.join(tmpdir(), 'paddock-hand-tools-'));
  root = path.join(base, 'ws');
  outside = path.join(base, 'outside');
  mkdirSync(root);
  mkdirSync(outside);
  writeFileSync(path.join(outside, 'secret.txt'), 'top secret\n');
  ws = new Workspace(root);
});

afterEach(() => {
  ws.dispose();
  rmSync(base, { recursive: true, force: true });
});

describe('paddock-hand file tools', () => {
  it('writes a file creating its parent folders, then reads it whole and by line range', async () => {
    expect(await ws.write({ file_path: 'src/deep/a.txt', content: 'one\ntwo\nthree\n' })).toBe('wrote 14 bytes to src/deep/a.txt');
    expect(readFileSync(path.join(root, 'src/deep/a.txt'), 'utf8')).toBe('one\ntwo\nthree\n');
    expect(await ws.read({ file_path: './src/deep/a.txt' })).toBe('one\ntwo\nthree\n');
    expect(await ws.read({ file_path: 'src/deep/a.txt', view_range: [2, 3] })).toBe('two\nthree');
    expect(await ws.read({ file_path: 'src/deep/a.txt', view_range: [3, -1] })).toBe('three\n');
  });

  it('accepts an absolute path inside the workspace', async () => {
    await ws.write({ file_path: path.join(root, 'abs.txt'), content: 'x' });
    expect(await ws.read({ file_path: 'abs.txt' })).toBe('x');
  });

  it('says when a file to read is missing, is a directory, or the line range is backwards', async () => {
    await expect(ws.read({ file_path: 'nope.txt' })).rejects.toThrow('read: no such file: nope.txt');
    mkdirSync(path.join(root, 'dir'));
    await expect(ws.read({ file_path: 'dir' })).rejects.toThrow('read: dir is a directory');
    await ws.write({ file_path: 'a', content: '1\n2\n3' });
    await expect(ws.read({ file_path: 'a', view_range: [3, 1] })).rejects.toThrow('read: view_range start 3 is after its end 1');
  });

  it('refuses to read a file over the size limit', async () => {
    const small = new Workspace(root, { fileBytes: 10 });
    await small.write({ file_path: 'big', content: 'x'.repeat(11) });
    await expect(small.read({ file_path: 'big' })).rejects.toThrow(/over the 10-byte limit/);
  });

  it('edits one exact occurrence and refuses an absent or repeated old_string', async () => {
    await ws.write({ file_path: 'a.ts', content: 'const a = 1;\nconst b = 1;\n' });
    expect(await ws.edit({ file_path: 'a.ts', old_string: 'a = 1', new_string: 'a = 2' })).toBe('edited a.ts');
    expect(await ws.read({ file_path: 'a.ts' })).toBe('const a = 2;\nconst b = 1;\n');
    await expect(ws.edit({ file_path: 'a.ts', old_string: 'zzz', new_string: 'y' })).rejects.toThrow('edit: old_string not found in a.ts');
    await expect(ws.edit({ file_path: 'a.ts', old_string: 'const', new_string: 'let' })).rejects.toThrow('edit: old_string occurs 2 times in a.ts; include more context to make it unique, or set replace_all');
    await expect(ws.edit({ file_path: 'missing.ts', old_string: 'a', new_string: 'b' })).rejects.toThrow('edit: no such file: missing.ts');
  });
});

describe('paddock-hand tool inputs (the Managed Agents toolset names)', () => {
  it('reads a view_range of 1-based inclusive lines, with -1 for the end of the file, and refuses one that names no lines', async () => {
    await ws.write({ file_path: 'a.txt', content: 'one\ntwo\nthree' });
    expect(await ws.read({ file_path: 'a.txt', view_range: [1, 1] })).toBe('one');
    expect(await ws.read({ file_path: 'a.txt', view_range: [2, -1] })).toBe('two\nthree');
    await expect(ws.read({ file_path: 'a.txt', view_range: [0, 2] })).rejects.toThrow('read: view_range start 0 must be a line number (1 or more)');
    await expect(ws.read({ file_path: 'a.txt', view_range: [1, -2] })).rejects.toThrow(/view_range end -2 must be a line number/);
    await expect(runTool(ws, 'read', { file_path: 'a.txt', view_range: [1] })).rejects.toThrow(/read: invalid input: view_range/);
  });

  it('replaces every occurrence with replace_all, still refusing an absent old_string', async () => {
    await ws.write({ file_path: 'a.ts', content: 'let a = 1;\nlet b = 1;\n' });
    expect(await ws.edit({ file_path: 'a.ts', old_string: 'let', new_string: 'const', replace_all: true })).toBe('edited a.ts (2 replacements)');
    expect(await ws.read({ file_path: 'a.ts' })).toBe('const a = 1;\nconst b = 1;\n');
    expect(await ws.edit({ file_path: 'a.ts', old_string: 'a = 1', new_string: 'a = $&', replace_all: true })).toBe('edited a.ts');
    expect(await ws.read({ file_path: 'a.ts' })).toBe('const a = $&;\nconst b = 1;\n');
    await expect(ws.edit({ file_path: 'a.ts', old_string: 'zzz', new_string: 'y', replace_all: true })).rejects.toThrow('edit: old_string not found in a.ts');
  });

  it('globs under a path relative to the workspace, answering workspace-relative paths, and refuses a path outside it', async () => {
    await ws.write({ file_path: 'src/lib/a.ts', content: '' });
    await ws.write({ file_path: 'src/b.ts', content: '' });
    await ws.write({ file_path: 'top.ts', content: '' });
    expect(await ws.glob({ pattern: '**/*.ts', path: 'src' })).toBe('src/b.ts\nsrc/lib/a.ts');
    expect(await ws.glob({ pattern: 'lib/*.ts', path: './src/' })).toBe('src/lib/a.ts');
    expect(await ws.glob({ pattern: '*.ts', path: '.' })).toBe('top.ts');
    await expect(ws.glob({ pattern: '*', path: '../' })).rejects.toThrow('path ../ is outside the workspace');
    await expect(ws.glob({ pattern: '*', path: outside })).rejects.toThrow(/outside the workspace/);
    await expect(ws.glob({ pattern: '*', path: 'nope' })).rejects.toThrow('glob: no such folder: nope');
    await expect(ws.glob({ pattern: '*', path: 'top.ts' })).rejects.toThrow('glob: top.ts is not a folder');
  });

  it("still takes Paddock's old names (path, start_line/end_line, old_text/new_text), as calls stored before the rename carry them", async () => {
    expect(await runTool(ws, 'write', { path: 'old.txt', content: 'one\ntwo\nthree\n' })).toBe('wrote 14 bytes to old.txt');
    expect(await runTool(ws, 'read', { path: 'old.txt', start_line: 2, end_line: 2 })).toBe('two');
    expect(await runTool(ws, 'read', { path: 'old.txt', start_line: 3 })).toBe('three\n');
    expect(await runTool(ws, 'edit', { path: 'old.txt', old_text: 'two', new_text: 'deux' })).toBe('edited old.txt');
    expect(await runTool(ws, 'read', { file_path: 'old.txt', view_range: [2, 2] })).toBe('deux');
  });

  it('accepts bash restart and changes nothing, as every command already starts in a fresh shell', async () => {
    expect(await runTool(ws, 'bash', { command: 'X=1; cd /; echo $X', restart: false })).toBe('1\nexit code: 0');
    expect(await runTool(ws, 'bash', { command: 'echo "[$X]"; pwd', restart: true })).toBe(`[]\n${ws.root}\nexit code: 0`);
  });
});

describe('paddock-hand workspace confinement', () => {
  it('refuses a path that climbs out with ..', async () => {
    await expect(ws.write({ file_path: '../x', content: 'x' })).rejects.toThrow('path ../x is outside the workspace');
    await expect(ws.read({ file_path: 'a/../../outside/secret.txt' })).rejects.toThrow(/outside the workspace/);
    expect(() => statSync(path.join(base, 'x'))).toThrow();
  });

  it('refuses an absolute path outside the workspace', async () => {
    const secret = path.join(outside, 'secret.txt');
    await expect(ws.read({ file_path: secret })).rejects.toThrow(`path ${secret} is outside the workspace`);
    await expect(ws.write({ file_path: '/etc/paddock-hand-test', content: 'x' })).rejects.toThrow(/outside the workspace/);
  });

  it('refuses a symlink that resolves outside, for reads, writes, edits and new files below it', async () => {
    symlinkSync(outside, path.join(root, 'link'));
    symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'secret-link'));
    await expect(ws.read({ file_path: 'link/secret.txt' })).rejects.toThrow('path link/secret.txt is outside the workspace');
    await expect(ws.read({ file_path: 'secret-link' })).rejects.toThrow(/outside the workspace/);
    await expect(ws.edit({ file_path: 'secret-link', old_string: 'top', new_string: 'no' })).rejects.toThrow(/outside the workspace/);
    await expect(ws.write({ file_path: 'link/new/file.txt', content: 'x' })).rejects.toThrow(/outside the workspace/);
    await expect(ws.grep({ pattern: 'secret', path: 'link' })).rejects.toThrow(/outside the workspace/);
    expect(readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('top secret\n');
  });

  it('refuses a dangling symlink whose target is outside, which a write would otherwise create', async () => {
    symlinkSync(path.join(outside, 'planted.txt'), path.join(root, 'dangling'));
    await expect(ws.write({ file_path: 'dangling', content: 'x' })).rejects.toThrow(/outside the workspace/);
    expect(() => statSync(path.join(outside, 'planted.txt'))).toThrow();
  });

  it('follows a symlink that stays inside the workspace', async () => {
    await ws.write({ file_path: 'real/a.txt', content: 'inside' });
    symlinkSync(path.join(root, 'real'), path.join(root, 'alias'));
    expect(await ws.read({ file_path: 'alias/a.txt' })).toBe('inside');
  });

  it('does not grep through symlinks found while walking', async () => {
    symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'secret-link'));
    expect(await ws.grep({ pattern: 'secret' })).toBe('no matches for secret');
  });
});

describe('paddock-hand glob and grep', () => {
  beforeEach(async () => {
    await ws.write({ file_path: 'src/b.ts', content: 'const b = 2;\n' });
    await ws.write({ file_path: 'src/lib/a.ts', content: 'const a = 1;\nexport { a };\n' });
    await ws.write({ file_path: 'README.md', content: '# const\n' });
    await ws.write({ file_path: 'node_modules/dep/index.ts', content: 'const dep = 1;\n' });
    await ws.write({ file_path: '.git/config.ts', content: 'const git = 1;\n' });
    writeFileSync(path.join(root, 'src/blob.bin'), Buffer.from([0x63, 0x6f, 0x6e, 0x73, 0x74, 0, 1, 2]));
  });

  it('globs sorted relative paths and skips node_modules and .git unless the pattern names them', async () => {
    expect(await ws.glob({ pattern: '**/*.ts' })).toBe('src/b.ts\nsrc/lib/a.ts');
    expect(await ws.glob({ pattern: 'src/**/*.ts' })).toBe('src/b.ts\nsrc/lib/a.ts');
    expect(await ws.glob({ pattern: 'node_modules/**/*.ts' })).toBe('node_modules/dep/index.ts');
    expect(await ws.glob({ pattern: '*.md' })).toBe('README.md');
    expect(await ws.glob({ pattern: '**/*.py' })).toBe('no files match **/*.py');
  });

  it("leaves out the sandbox runtime's empty placeholders at the top level, for glob and the file tree alike", async () => {
    for (const name of ['.bashrc', '.gitconfig', '.mcp.json']) writeFileSync(path.join(root, name), '');
    mkdirSync(path.join(root, '.vscode'));
    writeFileSync(path.join(root, '.gitmodules'), '[submodule "x"]\n');
    mkdirSync(path.join(root, 'sub'));
    writeFileSync(path.join(root, 'sub/.bashrc'), '');
    writeFileSync(path.join(root, '.env'), '');
    expect(await ws.glob({ pattern: '**/*' })).toBe('.env\n.gitmodules\nREADME.md\nsrc/b.ts\nsrc/blob.bin\nsrc/lib/a.ts\nsub/.bashrc');
    expect(await ws.glob({ pattern: '.*' })).toBe('.env\n.gitmodules');
  });

  it('caps glob results with a notice', async () => {
    const small = new Workspace(root, { globResults: 2 });
    expect(await small.glob({ pattern: '**' })).toBe('README.md\nsrc/b.ts\n[glob: 2 more matches not shown; narrow the pattern]');
  });

  it('greps path:line: text, skipping binary files, node_modules and .git', async () => {
    expect(await ws.grep({ pattern: 'const \\w' })).toBe('src/b.ts:1: const b = 2;\nsrc/lib/a.ts:1: const a = 1;');
    expect(await ws.grep({ pattern: 'export', path: 'src/lib' })).toBe('src/lib/a.ts:2: export { a };');
    expect(await ws.grep({ pattern: 'const', path: 'src/b.ts' })).toBe('src/b.ts:1: const b = 2;');
    expect(await ws.grep({ pattern: 'dep', path: 'node_modules' })).toBe('node_modules/dep/index.ts:1: const dep = 1;');
    expect(await ws.grep({ pattern: 'nothing here' })).toBe('no matches for nothing here');
  });

  it('caps grep results with a notice and rejects an invalid pattern or missing path', async () => {
    const small = new Workspace(root, { grepResults: 1 });
    expect(await small.grep({ pattern: 'const' })).toBe('README.md:1: # const\n[grep: stopped after 1 matches; narrow the pattern or path]');
    await expect(ws.grep({ pattern: '(' })).rejects.toThrow(/grep: invalid pattern/);
    await expect(ws.grep({ pattern: 'x', path: 'nope' })).rejects.toThrow('grep: no such file: nope');
  });
});

describe('paddock-hand bash', () => {
  it('runs in the workspace and ends with the exit code, stdout and stderr interleaved', async () => {
    const out = await ws.bash({ command: 'pwd; echo out; sleep 0.05; echo err >&2; sleep 0.05; echo again; exit 3' });
    expect(out).toBe(`${root}\nout\nerr\nagain\nexit code: 3`);
    expect(await ws.bash({ command: 'true' })).toBe('exit code: 0');
  });

  it('runs with a clean environment, never the server’s', async () => {
    process.env.PADDOCK_TEST_SECRET = 'hunter2';
    try {
      const out = await ws.bash({ command: 'env' });
      expect(out).not.toContain('PADDOCK_TEST_SECRET');
      expect(out).not.toContain('hunter2');
      expect(out).toContain(`HOME=${process.env.HOME ?? root}\n`); // the hand process's own HOME (a private one in the sandbox)
      expect(out).toContain('LANG=C.UTF-8\n');
      expect(out).toContain('TERM=dumb\n');
    } finally {
      delete process.env.PADDOCK_TEST_SECRET;
    }
  });

  it('kills the whole process group on timeout and says so', async () => {
    const started = Date.now();
    const out = await ws.bash({ command: 'sleep 30 & echo $!; sleep 30', timeout_ms: 1000 });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(out).toMatch(/^\d+\nkilled by SIGKILL after timeout of 1000 ms$/);
    const pid = Number(out.split('\n')[0]);
    expect(await eventually(() => !running(pid))).toBe(true);
  });

  it('kills the process group when the call is aborted', async () => {
    const ac = new AbortController();
    const call = ws.bash({ command: 'sleep 30 & echo $! > bg.pid; wait' }, ac.signal);
    expect(await eventually(() => readFileOr(path.join(root, 'bg.pid')) !== '')).toBe(true);
    const pid = Number(readFileOr(path.join(root, 'bg.pid')));
    ac.abort();
    expect(await call).toMatch(/cancelled: killed by SIGKILL$/);
    expect(await eventually(() => !running(pid))).toBe(true);
  });

  it('caps the output with an explicit notice, keeping the head and the tail', async () => {
    const out = await ws.bash({ command: "head -c 100000 /dev/zero | tr '\\0' a; echo; echo last line" });
    expect(out).toContain('[output truncated: ');
    expect(out).toMatch(/\[output truncated: 70\d\d\d more bytes\]/);
    expect(out.endsWith('last line\nexit code: 0')).toBe(true);
    expect(out.length).toBeLessThan(30_200);
  });

  it('does not wait for background jobs that keep the output open', async () => {
    const started = Date.now();
    const out = await ws.bash({ command: 'sleep 5 & echo started' });
    expect(out).toBe('started\nexit code: 0');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('refuses a timeout over the maximum', async () => {
    await expect(ws.bash({ command: 'true', timeout_ms: 600_001 })).rejects.toThrow(/over the maximum of 600000/);
  });
});

function readFileOr(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return '';
  }
}

describe('paddock-hand resource limits', () => {
  it('applies the memory and CPU-time limits to every command', async () => {
    const limited = new Workspace(root, { memoryMb: 64, cpuSeconds: 2 });
    const out = await limited.bash({ command: 'ulimit -v; ulimit -t' });
    expect(out).toContain('65536\n2');
    const unlimited = await ws.bash({ command: 'ulimit -v' });
    expect(unlimited).toContain('unlimited');
  });

  it('stops a command that allocates past the memory limit or burns past the CPU limit', async () => {
    const limited = new Workspace(root, { memoryMb: 64, cpuSeconds: 1 });
    const alloc = await limited.bash({ command: 'head -c 200000000 /dev/zero | tr "\\0" "x" | sort > /dev/null' });
    expect(alloc).toContain('memory exhausted');
    expect(alloc).not.toContain('exit code: 0');
    const spin = await limited.bash({ command: 'while :; do :; done', timeout_ms: 20_000 });
    expect(spin).toContain('killed by SIGXCPU');
  });
});
