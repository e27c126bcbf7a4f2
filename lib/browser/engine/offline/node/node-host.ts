import 'client-only';
import type { QuickJSContext, QuickJSHandle } from 'quickjs-emscripten-core';
import { ResolveError, type Resolver } from '~/lib/browser/engine/offline/node/resolve';
import { VfsError, type Vfs, type VNode } from '~/lib/browser/engine/offline/node/vfs';

/**
 * The host functions the Node bootstrap calls (`host.*` inside QuickJS): output, the file copy,
 * module resolution, timers, child processes, exit. Data crosses as strings, JSON and
 * ArrayBuffers; fs failures come back as Node-shaped error JSON rather than exceptions, so the
 * bootstrap can throw proper `Error`s with `code`, `syscall` and `path`.
 */

/** What the host functions act on: the run's state (implemented by NodeRun). */
export interface NodeHostEnv {
  readonly vfs: Vfs;
  readonly resolver: Resolver;
  readonly stdin: Uint8Array;
  /** Timer id → due time (epoch ms) and whether it keeps the process alive. */
  readonly timers: Map<number, { due: number; ref: boolean }>;
  write(fd: 1 | 2, text: string): void;
  /** Raw bytes for a stream (decoded as UTF-8 across chunk boundaries). */
  writeBytes(fd: 1 | 2, bytes: Uint8Array): void;
  exit(code: number): void;
  startExec(id: number, command: string, cwd: string, env: Record<string, string>, stdin: string): void;
}

export function installHostFunctions(ctx: QuickJSContext, host: QuickJSHandle, env: NodeHostEnv): void {
  const def = (name: string, impl: (...args: QuickJSHandle[]) => QuickJSHandle | { error: QuickJSHandle } | undefined) => {
    const fn = ctx.newFunction(name, (...args) => {
      try {
        return impl(...args);
      } catch (e) {
        // Surfaces in the script as an Error with this message.
        throw e instanceof Error ? e : new Error(String(e));
      }
    });
    ctx.setProp(host, name, fn);
    fn.dispose();
  };
  const str = (h: QuickJSHandle | undefined) => (h === undefined ? '' : ctx.getString(h));
  const num = (h: QuickJSHandle | undefined) => (h === undefined ? 0 : ctx.getNumber(h));
  const bytes = (buf: QuickJSHandle | undefined, off: QuickJSHandle | undefined, len: QuickJSHandle | undefined): Uint8Array => {
    if (buf === undefined) return new Uint8Array(0);
    const life = ctx.getArrayBuffer(buf);
    try {
      const o = num(off);
      return life.value.slice(o, o + num(len));
    } finally {
      life.dispose();
    }
  };
  const arrayBuffer = (u: Uint8Array) => ctx.newArrayBuffer(u.byteOffset === 0 && u.byteLength === u.buffer.byteLength ? u.buffer : u.slice().buffer);

  def('write', (fd, s) => {
    const f = num(fd) === 2 ? 2 : 1;
    env.write(f, str(s));
    return undefined;
  });
  def('writeBytes', (fd, buf, off, len) => {
    const f = num(fd) === 2 ? 2 : 1;
    env.writeBytes(f, bytes(buf, off, len));
    return undefined;
  });
  def('decode', (buf, off, len) => ctx.newString(new TextDecoder().decode(bytes(buf, off, len))));
  def('encode', (s) => arrayBuffer(new TextEncoder().encode(str(s))));
  def('now', () => ctx.newNumber(performance.now()));
  def('random', (n) => arrayBuffer(crypto.getRandomValues(new Uint8Array(Math.min(65536, Math.max(0, num(n)))))));
  def('readStdin', () => arrayBuffer(env.stdin));
  def('exit', (code) => {
    env.exit(num(code) | 0);
    return undefined;
  });
  def('timer', (id, ms) => {
    env.timers.set(num(id), { due: Date.now() + num(ms), ref: env.timers.get(num(id))?.ref ?? true });
    return undefined;
  });
  def('timerClear', (id) => {
    env.timers.delete(num(id));
    return undefined;
  });
  def('timerRef', (id, ref) => {
    const t = env.timers.get(num(id));
    if (t) t.ref = ctx.dump(ref) === true;
    return undefined;
  });
  def('exec', (id, cmd, cwd, envJson, input) => {
    env.startExec(num(id), str(cmd), str(cwd), JSON.parse(str(envJson)) as Record<string, string>, str(input));
    return undefined;
  });
  def('compile', (src, filename) => {
    const r = ctx.evalCode(str(src), str(filename));
    return r.error ? { error: r.error } : r.value;
  });
  def('evalGlobal', (src, filename) => {
    const r = ctx.evalCode(str(src), str(filename));
    return r.error ? { error: r.error } : r.value;
  });
  def('resolve', (request, fromDir, mode) => {
    try {
      const r = env.resolver.resolve(str(request), str(fromDir), str(mode) === 'import' ? 'import' : 'require');
      return ctx.newString(JSON.stringify(r));
    } catch (e) {
      const code = e instanceof ResolveError ? e.code : 'MODULE_NOT_FOUND';
      return ctx.newString(JSON.stringify({ err: { code, message: (e as Error).message } }));
    }
  });
  def('readFile', (p) => {
    const path = str(p);
    if (path === '/dev/null') return arrayBuffer(new Uint8Array(0));
    if (path === '/dev/stdin') return arrayBuffer(env.stdin);
    try {
      return arrayBuffer(env.vfs.readFile(path));
    } catch (e) {
      return ctx.newString(JSON.stringify(fsErr(e)));
    }
  });
  def('writeFile', (p, buf, off, len, flags) => {
    const path = str(p);
    const data = bytes(buf, off, len);
    if (path === '/dev/null') return ctx.newString('');
    if (path === '/dev/stdout' || path === '/dev/stderr') {
      const f = path === '/dev/stderr' ? 2 : 1;
      env.writeBytes(f, data);
      return ctx.newString('');
    }
    try {
      const f = JSON.parse(str(flags)) as { append?: boolean; exclusive?: boolean; mode?: number };
      env.vfs.writeFile(path, data, f);
      return ctx.newString('');
    } catch (e) {
      return ctx.newString(JSON.stringify(fsErr(e)));
    }
  });
  def('fs', (op, argsJson) => {
    try {
      const result = fsOp(env.vfs, str(op), JSON.parse(str(argsJson)) as unknown[]);
      return ctx.newString(JSON.stringify({ ok: result ?? null }));
    } catch (e) {
      return ctx.newString(JSON.stringify({ err: fsErr(e) }));
    }
  });
}

function fsOp(vfs: Vfs, op: string, a: unknown[]): unknown {
  const s = (i: number) => String(a[i]);
  const b = (i: number) => a[i] === true;
  switch (op) {
    case 'stat':
      return s(0) === '/dev/null' ? { kind: 'other', size: 0, mode: 0o666, mtimeMs: 0, ino: 0 } : statOf(vfs.lookup(s(0), true, 'stat').node);
    case 'lstat':
      return statOf(vfs.lookup(s(0), false, 'lstat').node);
    case 'exists':
      return s(0) === '/dev/null' || vfs.tryStat(s(0)) !== null;
    case 'access':
      vfs.lookup(s(0), true, 'access');
      return null;
    case 'readdir':
      return vfs.readdir(s(0));
    case 'mkdir':
      return vfs.mkdir(s(0), b(1));
    case 'mkdtemp':
      return vfs.mkdtemp(s(0));
    case 'rm':
      vfs.rm(s(0), { recursive: b(1), force: b(2) });
      return null;
    case 'rmdir':
      vfs.rm(s(0), { recursive: b(1), dirOnly: true }, 'rmdir');
      return null;
    case 'unlink':
      vfs.rm(s(0), { fileOnly: true }, 'unlink');
      return null;
    case 'rename':
      vfs.rename(s(0), s(1));
      return null;
    case 'copyFile':
      vfs.copy(s(0), s(1), { exclusive: b(2) });
      return null;
    case 'cp':
      vfs.copy(s(0), s(1), { recursive: b(2) });
      return null;
    case 'realpath': {
      const abs = vfs.real(s(0), true, 'realpath');
      if (vfs.tryStat(abs) === null) throw new VfsError('ENOENT', 'realpath', s(0));
      return abs;
    }
    case 'readlink':
      return vfs.readlink(s(0));
    case 'symlink':
      vfs.symlink(s(0), s(1));
      return null;
    case 'chmod':
      vfs.chmod(s(0), Number(a[1]));
      return null;
    case 'utimes':
      vfs.utimes(s(0), Number(a[1]));
      return null;
    default:
      throw new Error(`unknown fs operation ${op}`);
  }
}

function statOf(node: VNode): { kind: string; size: number; mode: number; mtimeMs: number; ino: number } {
  return {
    kind: node.kind,
    size: node.kind === 'file' ? node.data.byteLength : node.kind === 'symlink' ? node.target.length : 4096,
    mode: node.kind === 'symlink' ? 0o777 : node.mode,
    mtimeMs: node.mtimeMs,
    ino: node.ino,
  };
}

function fsErr(e: unknown): { code: string; syscall?: string; path?: string; dest?: string; message: string } {
  if (e instanceof VfsError) return { code: e.code, syscall: e.syscall, path: e.path, dest: e.dest, message: e.message };
  return { code: 'EIO', message: `EIO: ${(e as Error).message}` };
}
