import type { Readable, Writable } from 'node:stream';

/**
 * The launcher's end of one hand's resident executor (native/paddock-exec.c, whose header says
 * the wire): requests by id, replies matched back; a command's output streams to its handlers.
 */

export type ExecKind = 'file' | 'dir' | 'symlink' | 'other';
const KINDS: Record<string, ExecKind> = { f: 'file', d: 'dir', l: 'symlink', o: 'other' };

/** An errno from the executor, as Node's fs errors carry theirs (`.code`), so the tools word it alike. */
export class ExecError extends Error {
  readonly code: string;

  constructor(
    readonly errno: number,
    what: string,
  ) {
    const [code, words] = ERRNO[errno] ?? [`E${errno}`, `error ${errno}`];
    super(`${code}: ${words}, ${what}`);
    this.code = code;
  }
}

/** Linux errno numbers → name and words as Node's fs says them (the rest by number). */
const ERRNO: Record<number, [string, string]> = {
  1: ['EPERM', 'operation not permitted'],
  2: ['ENOENT', 'no such file or directory'],
  5: ['EIO', 'i/o error'],
  13: ['EACCES', 'permission denied'],
  17: ['EEXIST', 'file already exists'],
  20: ['ENOTDIR', 'not a directory'],
  21: ['EISDIR', 'illegal operation on a directory'],
  22: ['EINVAL', 'invalid argument'],
  27: ['EFBIG', 'file too large'],
  28: ['ENOSPC', 'no space left on device'],
  30: ['EROFS', 'read-only file system'],
  36: ['ENAMETOOLONG', 'name too long'],
  40: ['ELOOP', 'too many symbolic links encountered'],
  122: ['EDQUOT', 'disk quota exceeded'],
};

interface Spawned {
  onOut(chunk: Buffer): void;
  onErr(chunk: Buffer): void;
  onExit(status: number): void;
}

export interface SpawnRequest {
  cwd: string;
  script: string;
  /** Set (`N=V`) or copied from the executor's own environment when set there (`=N`), in order; later wins. */
  env: string[];
}

export class ExecClient {
  private seq = 0;
  /** Bytes read but not yet a whole frame, and how many a whole frame needs. */
  private parts: Buffer[] = [];
  private have = 0;
  private need = 4;
  private readonly pending = new Map<number, { resolve: (b: Buffer) => void; reject: (e: Error) => void; what: string }>();
  private readonly spawned = new Map<number, Spawned>();
  private gone: Error | null = null;
  private readonly endListeners: Array<(e: Error) => void> = [];
  /** Resolves with the executor's pid once it has said hello (it is running in its sandbox). */
  readonly hello: Promise<number>;
  private onHello: (pid: number) => void = () => undefined;
  private onNoHello: (e: Error) => void = () => undefined;

  constructor(
    private readonly input: Writable,
    output: Readable,
  ) {
    this.hello = new Promise((resolve, reject) => {
      this.onHello = resolve;
      this.onNoHello = reject;
    });
    this.hello.catch(() => undefined);
    input.on('error', () => undefined);
    output.on('data', (chunk: Buffer) => this.data(chunk));
    output.once('close', () => this.end(new Error('the hand executor exited')));
  }

  /** Every pending request fails with `e` from now on. */
  end(e: Error): void {
    if (this.gone) return;
    this.gone = e;
    // Before any pending request learns of it: a listener can make the hand's end the answer.
    for (const l of this.endListeners.splice(0)) l(e);
    this.onNoHello(e);
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
    for (const s of this.spawned.values()) s.onExit(-1);
    this.spawned.clear();
  }

  private data(chunk: Buffer): void {
    // Chunks are joined once a whole frame is in, not at each one: a 10 MB read arrives in 64 KB pieces.
    this.parts.push(chunk);
    this.have += chunk.length;
    if (this.have < this.need) return;
    let buf = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
    while (buf.length >= 4) {
      const len = buf.readUInt32LE(0);
      if (buf.length < 4 + len) break;
      const frame = buf.subarray(4, 4 + len);
      buf = buf.subarray(4 + len);
      this.frame(frame.readUInt32LE(0), String.fromCharCode(frame[4]!), frame.subarray(5));
    }
    this.parts = buf.length > 0 ? [buf] : [];
    this.have = buf.length;
    this.need = buf.length >= 4 ? 4 + buf.readUInt32LE(0) : 4;
  }

  private frame(id: number, op: string, body: Buffer): void {
    switch (op) {
      case 'h':
        return this.onHello(body.readUInt32LE(0));
      case 'r': {
        const p = this.pending.get(id);
        if (!p) return;
        this.pending.delete(id);
        const errno = body.readInt32LE(0);
        if (errno === 0) return p.resolve(body.subarray(4));
        this.spawned.delete(id); // a spawn that failed: no exit frame follows
        return p.reject(new ExecError(errno, p.what));
      }
      case 'o':
        return this.spawned.get(id)?.onOut(Buffer.from(body));
      case 'e':
        return this.spawned.get(id)?.onErr(Buffer.from(body));
      case 'x': {
        const s = this.spawned.get(id);
        this.spawned.delete(id);
        return s?.onExit(body.readInt32LE(0));
      }
    }
  }

  private send(op: string, payload: Buffer, what: string, id = ++this.seq): Promise<Buffer> {
    if (this.gone) return Promise.reject(this.gone);
    const head = Buffer.alloc(9);
    head.writeUInt32LE(5 + payload.length, 0);
    head.writeUInt32LE(id, 4);
    head[8] = op.charCodeAt(0);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, what });
      this.input.write(Buffer.concat([head, payload]));
    });
  }

  private pathOp(op: string, p: string, what: string): Promise<Buffer> {
    return this.send(op, Buffer.from(`${p}\0`), `${what} '${p}'`);
  }

  async stat(p: string, follow: boolean): Promise<{ kind: ExecKind; size: number }> {
    const b = await this.pathOp(follow ? 'S' : 'L', p, follow ? 'stat' : 'lstat');
    return { kind: KINDS[String.fromCharCode(b[0]!)] ?? 'other', size: Number(b.readBigUInt64LE(1)) };
  }

  async read(p: string, offset = 0, max = Number.MAX_SAFE_INTEGER): Promise<Buffer> {
    const head = Buffer.alloc(16);
    head.writeBigUInt64LE(BigInt(offset), 0);
    head.writeBigUInt64LE(BigInt(max), 8);
    return this.send('R', Buffer.concat([head, Buffer.from(`${p}\0`)]), `open '${p}'`);
  }

  async write(p: string, data: Uint8Array): Promise<void> {
    const name = Buffer.from(p);
    const head = Buffer.alloc(4);
    head.writeUInt32LE(name.length, 0);
    await this.send('W', Buffer.concat([head, name, data]), `open '${p}'`);
  }

  async readdir(p: string): Promise<Array<{ name: string; kind: ExecKind }>> {
    const b = await this.pathOp('D', p, 'scandir');
    const out: Array<{ name: string; kind: ExecKind }> = [];
    for (let i = 0; i < b.length; ) {
      const end = b.indexOf(0, i + 1);
      out.push({ kind: KINDS[String.fromCharCode(b[i]!)] ?? 'other', name: b.subarray(i + 1, end).toString('utf8') });
      i = end + 1;
    }
    return out;
  }

  async mkdirp(p: string): Promise<void> {
    await this.pathOp('M', p, 'mkdir');
  }

  async realpath(p: string): Promise<string> {
    return (await this.pathOp('P', p, 'realpath')).toString('utf8');
  }

  async readlink(p: string): Promise<string> {
    return (await this.pathOp('K', p, 'readlink')).toString('utf8');
  }

  /** Starts `bash -c script` in its own process group; resolves once it runs, with its id (for `kill`). */
  async spawn(req: SpawnRequest, handlers: Spawned): Promise<number> {
    const id = ++this.seq;
    this.spawned.set(id, handlers);
    const parts = [req.cwd, req.script, ...req.env].map((s) => `${s}\0`).join('');
    try {
      await this.send('X', Buffer.from(parts), 'spawn /bin/bash', id);
    } catch (e) {
      this.spawned.delete(id);
      throw e;
    }
    return id;
  }

  /** SIGKILL to a spawned command's whole process group. */
  kill(id: number): void {
    if (this.gone) return;
    const frame = Buffer.alloc(13);
    frame.writeUInt32LE(9, 0);
    frame.writeUInt32LE(0, 4);
    frame[8] = 'T'.charCodeAt(0);
    frame.writeUInt32LE(id, 9);
    this.input.write(frame);
  }

  /** Calls `listener` once, when the executor is gone (at once if it is already), before any pending request fails. */
  onEnd(listener: (e: Error) => void): void {
    if (this.gone) listener(this.gone);
    else this.endListeners.push(listener);
  }

  /** Our end closing: the executor kills every group it started, then exits. */
  close(): void {
    this.input.end();
  }
}
