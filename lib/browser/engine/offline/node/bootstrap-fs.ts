import 'client-only';
/**
 * Bootstrap part 3 of 4: `fs` on the run's copy of the workspace (sync, callback and promise
 * forms) and `child_process` (commands run asynchronously in the same shell).
 * Plain JS in a template string: no backticks or `${` below.
 */
export const BOOTSTRAP_FS = String.raw`
// ── fs ─────────────────────────────────────────────────────────────────────
const ERRNO = { ENOENT: -2, EEXIST: -17, ENOTDIR: -20, EISDIR: -21, ENOTEMPTY: -39, EINVAL: -22, ELOOP: -40, EBADF: -9, EPERM: -1, EACCES: -13, EXDEV: -18 };
function sysError(err) {
  const e = new Error(err.message);
  e.errno = ERRNO[err.code] || -1; e.code = err.code; e.syscall = err.syscall;
  if (err.path !== undefined) e.path = err.path;
  if (err.dest !== undefined) e.dest = err.dest;
  return e;
}
function hostFs(op, ...args) {
  const r = JSON.parse(host.fs(op, JSON.stringify(args)));
  if (r.err) throw sysError(r.err);
  return r.ok;
}
function fileURLToPath(u) {
  const s = typeof u === 'string' ? u : u.href;
  if (!s.startsWith('file:')) { const e = new TypeError('The URL must be of scheme file'); e.code = 'ERR_INVALID_URL_SCHEME'; throw e; }
  return decodeURIComponent(new URL(s).pathname);
}
function pathToFileURL(p) { return new URL('file://' + encodeURI(path.resolve(p)).replace(/\?/g, '%3F').replace(/#/g, '%23')); }
function toPath(p, name) {
  if (p instanceof URL) return fileURLToPath(p);
  if (p instanceof Uint8Array) return utf8Decode(p);
  checkPath(p, name);
  if (p.includes('\0')) { const e = new TypeError('The argument \'' + (name || 'path') + '\' must be a string without null bytes'); e.code = 'ERR_INVALID_ARG_VALUE'; throw e; }
  return path.resolve(p);
}
const S_IFMT = { file: 0o100000, dir: 0o040000, symlink: 0o120000, other: 0o020000 };
class Stats {
  constructor(o) {
    this.dev = 2049; this.mode = S_IFMT[o.kind] | (o.mode & 0o7777); this.nlink = 1; this.uid = 1000; this.gid = 1000;
    this.rdev = 0; this.blksize = 4096; this.ino = o.ino; this.size = o.size; this.blocks = Math.ceil(o.size / 512);
    this.atimeMs = this.mtimeMs = this.ctimeMs = this.birthtimeMs = o.mtimeMs;
    this.atime = new Date(o.mtimeMs); this.mtime = new Date(o.mtimeMs); this.ctime = new Date(o.mtimeMs); this.birthtime = new Date(o.mtimeMs);
    Object.defineProperty(this, '_kind', { value: o.kind });
  }
  isFile() { return this._kind === 'file'; }
  isDirectory() { return this._kind === 'dir'; }
  isSymbolicLink() { return this._kind === 'symlink'; }
  isFIFO() { return false; } isSocket() { return false; } isBlockDevice() { return false; } isCharacterDevice() { return this._kind === 'other'; }
}
class Dirent {
  constructor(name, kind, parentPath) { this.name = name; this.parentPath = parentPath; this.path = parentPath; Object.defineProperty(this, '_kind', { value: kind }); }
  isFile() { return this._kind === 'file'; }
  isDirectory() { return this._kind === 'dir'; }
  isSymbolicLink() { return this._kind === 'symlink'; }
  isFIFO() { return false; } isSocket() { return false; } isBlockDevice() { return false; } isCharacterDevice() { return false; }
}
function encOf(o) { return typeof o === 'string' ? o : o && o.encoding ? o.encoding : null; }
function dataBytes(d, enc) {
  if (typeof d === 'string') return encodeString(d, enc || 'utf8');
  if (ArrayBuffer.isView(d) || d instanceof ArrayBuffer) return toU8(d);
  return encodeString(String(d), enc || 'utf8');
}
const fds = new Map();
let nextFd = 10;
function fdEntry(fd) { const e = fds.get(fd); if (!e) { const x = new Error('EBADF: bad file descriptor'); x.code = 'EBADF'; x.errno = -9; throw x; } return e; }
function readBytes(p) {
  if (p === 0 || p === '/dev/stdin') return new Uint8Array(host.readStdin());
  if (typeof p === 'number') return readBytes(fdEntry(p).path);
  const abs = toPath(p);
  const r = host.readFile(abs);
  if (typeof r === 'string') throw sysError(JSON.parse(r));
  return new Uint8Array(r);
}
function writeBytes(p, u, flags) {
  if (typeof p === 'number') {
    if (p === 1 || p === 2) { host.writeBytes(p, u.buffer, u.byteOffset, u.byteLength); return; }
    const e = fdEntry(p);
    writeBytes(e.path, u, { append: true });
    return;
  }
  const r = host.writeFile(toPath(p), u.buffer, u.byteOffset, u.byteLength, JSON.stringify(flags || {}));
  if (r) throw sysError(JSON.parse(r));
}
function flagsOf(f) {
  f = f || 'w';
  return { append: f.includes('a'), exclusive: f.includes('x') };
}
const fs = {
  constants: { F_OK: 0, R_OK: 4, W_OK: 2, X_OK: 1, O_RDONLY: 0, O_WRONLY: 1, O_RDWR: 2, O_CREAT: 64, O_EXCL: 128, O_TRUNC: 512, O_APPEND: 1024, S_IFMT: 0o170000, S_IFREG: 0o100000, S_IFDIR: 0o040000, S_IFLNK: 0o120000, COPYFILE_EXCL: 1 },
  Stats, Dirent,
  readFileSync(p, o) { const u = readBytes(p); const enc = encOf(o); return enc ? decodeBytes(u, enc) : Buffer._wrap(u); },
  writeFileSync(p, d, o) { const f = flagsOf(o && o.flag); writeBytes(p, dataBytes(d, encOf(o)), { append: f.append, exclusive: f.exclusive, mode: o && o.mode }); },
  appendFileSync(p, d, o) { writeBytes(p, dataBytes(d, encOf(o)), { append: true }); },
  existsSync(p) { try { return hostFs('exists', toPath(p)); } catch (_) { return false; } },
  accessSync(p) { hostFs('access', toPath(p)); },
  statSync(p, o) { try { return new Stats(hostFs('stat', toPath(p))); } catch (e) { if (o && o.throwIfNoEntry === false && e.code === 'ENOENT') return undefined; throw e; } },
  lstatSync(p, o) { try { return new Stats(hostFs('lstat', toPath(p))); } catch (e) { if (o && o.throwIfNoEntry === false && e.code === 'ENOENT') return undefined; throw e; } },
  fstatSync(fd) { return fs.statSync(fdEntry(fd).path); },
  readdirSync(p, o) {
    const dir = toPath(p);
    const walk = (d, prefix) => {
      const out = [];
      for (const e of hostFs('readdir', d)) {
        const name = prefix ? prefix + '/' + e.name : e.name;
        out.push(o && o.withFileTypes ? new Dirent(e.name, e.kind, prefix ? dir + '/' + prefix : dir) : name);
        if (o && o.recursive && e.kind === 'dir') out.push(...walk(d + '/' + e.name, name));
      }
      return out;
    };
    return walk(dir, '');
  },
  mkdirSync(p, o) { return hostFs('mkdir', toPath(p), !!(o && (o === true || o.recursive))); },
  mkdtempSync(prefix) { return hostFs('mkdtemp', toPath(prefix + 'XXXXXX')); },
  rmSync(p, o) { hostFs('rm', toPath(p), !!(o && o.recursive), !!(o && o.force)); },
  rmdirSync(p, o) { hostFs('rmdir', toPath(p), !!(o && o.recursive)); },
  unlinkSync(p) { hostFs('unlink', toPath(p)); },
  renameSync(a, b) { hostFs('rename', toPath(a), toPath(b)); },
  copyFileSync(a, b, mode) { hostFs('copyFile', toPath(a), toPath(b), !!(mode & 1)); },
  cpSync(a, b, o) { hostFs('cp', toPath(a), toPath(b), !!(o && o.recursive)); },
  realpathSync: Object.assign((p) => hostFs('realpath', toPath(p)), { native: (p) => hostFs('realpath', toPath(p)) }),
  readlinkSync(p) { return hostFs('readlink', toPath(p)); },
  symlinkSync(target, p) { hostFs('symlink', String(target), toPath(p)); },
  linkSync(a, b) { hostFs('copyFile', toPath(a), toPath(b), true); },
  chmodSync(p, mode) { hostFs('chmod', toPath(p), typeof mode === 'string' ? parseInt(mode, 8) : mode); },
  chownSync() {}, lchownSync() {}, fchmodSync() {}, fsyncSync() {}, fdatasyncSync() {},
  utimesSync(p, a, m) { hostFs('utimes', toPath(p), m instanceof Date ? m.getTime() : Number(m) * 1000); },
  truncateSync(p, len) { const u = readBytes(p); writeBytes(p, u.subarray(0, len || 0), {}); },
  openSync(p, flags) {
    flags = flags || 'r';
    const abs = toPath(p);
    if (flags.startsWith('r')) hostFs('access', abs);
    else if (flags.startsWith('w')) writeBytes(abs, new Uint8Array(0), { exclusive: flags.includes('x') });
    else if (!hostFs('exists', abs)) writeBytes(abs, new Uint8Array(0), {});
    const fd = nextFd++;
    fds.set(fd, { path: abs, pos: 0 });
    return fd;
  },
  closeSync(fd) { fdEntry(fd); fds.delete(fd); },
  writeSync(fd, d, a, b) {
    const u = typeof d === 'string' ? encodeString(d, typeof b === 'string' ? b : 'utf8') : toU8(d).subarray(a || 0, b === undefined ? undefined : (a || 0) + b);
    writeBytes(fd, u);
    return u.length;
  },
  readSync(fd, buf, off, len, pos) {
    if (off && typeof off === 'object') { len = off.length; pos = off.position; off = off.offset; }
    const e = fd === 0 ? { path: '/dev/stdin', pos: stdinPos } : fdEntry(fd);
    const all = readBytes(e.path);
    const start = pos == null ? e.pos : pos;
    const part = all.subarray(start, start + (len === undefined ? buf.length - (off || 0) : len));
    toU8(buf).set(part, off || 0);
    if (pos == null) { if (fd === 0) stdinPos += part.length; else e.pos += part.length; }
    return part.length;
  },
  watch() { throw new Error('fs.watch is not supported in the offline engine'); },
  watchFile() {}, unwatchFile() {},
  createWriteStream(p, o) {
    const s = new EventEmitter();
    const abs = toPath(p);
    const f = flagsOf(o && o.flags);
    if (!f.append) writeBytes(abs, new Uint8Array(0), {});
    s.path = abs; s.bytesWritten = 0; s.writable = true;
    s.write = (c, enc, cb) => { if (typeof enc === 'function') cb = enc; const u = dataBytes(c, typeof enc === 'string' ? enc : 'utf8'); writeBytes(abs, u, { append: true }); s.bytesWritten += u.length; if (cb) queueMicrotask(cb); return true; };
    s.end = (c, enc, cb) => { if (typeof c === 'function') cb = c; else if (c != null) s.write(c, enc); setTimeout(() => { s.emit('finish'); s.emit('close'); if (typeof cb === 'function') cb(); }, 0); return s; };
    s.close = (cb) => s.end(cb);
    s.cork = s.uncork = () => {};
    setTimeout(() => s.emit('open', 0), 0);
    return s;
  },
  createReadStream(p, o) {
    const s = new EventEmitter();
    const enc = encOf(o);
    s.path = toPath(p);
    s.setEncoding = (e) => { s._enc = e; return s; };
    s.pipe = (dest) => { s.on('data', (d) => dest.write(d)); s.on('end', () => { if (dest !== process.stdout && dest !== process.stderr) dest.end(); }); return dest; };
    s.resume = s.pause = () => s;
    s.destroy = () => { s._destroyed = true; return s; };
    const read = () => { const b = fs.readFileSync(s.path); return s._enc || enc ? b.toString(s._enc || enc) : b; };
    setTimeout(() => {
      if (s._destroyed) return;
      let d;
      try { d = read(); } catch (e) { s.emit('error', e); return; }
      s.emit('open', 0); s.emit('ready');
      if (d.length > 0) s.emit('data', d);
      s.emit('end'); s.emit('close');
    }, 0);
    s[Symbol.asyncIterator] = async function* () { s._destroyed = true; const d = read(); if (d.length > 0) yield d; };
    return s;
  },
};
let stdinPos = 0;
// Callback and promise versions of every *Sync function (they run synchronously on the copy).
const fsPromises = {};
for (const name of Object.keys(fs)) {
  if (!name.endsWith('Sync') || typeof fs[name] !== 'function') continue;
  const base = name.slice(0, -4);
  const sync = fs[name];
  if (!(base in fs)) {
    fs[base] = function (...args) {
      const cb = typeof args[args.length - 1] === 'function' ? args.pop() : null;
      let r, err = null;
      try { r = sync.apply(fs, args); } catch (e) { err = e; }
      if (cb) {
        if (base === 'exists') setTimeout(() => cb(r), 0);
        else setTimeout(() => (err ? cb(err) : cb(null, r)), 0);
      }
    };
  }
  fsPromises[base] = (...args) => new Promise((res, rej) => { try { res(sync.apply(fs, args)); } catch (e) { rej(e); } });
}
delete fsPromises.exists;
fsPromises.constants = fs.constants;
fsPromises.open = async (p, flags) => {
  const fd = fs.openSync(p, flags);
  return {
    fd,
    readFile: async (o) => fs.readFileSync(fd, o),
    writeFile: async (d, o) => fs.writeFileSync(fdEntry(fd).path, d, o),
    write: async (d) => ({ bytesWritten: fs.writeSync(fd, d) }),
    stat: async () => fs.fstatSync(fd),
    close: async () => fs.closeSync(fd),
  };
};
fs.promises = fsPromises;

// ── child_process: commands run in the same shell (just-bash), asynchronously ──
function shellQuote(a) { a = String(a); return /^[\w@%+=:,./-]+$/.test(a) ? a : "'" + a.replace(/'/g, "'\\''") + "'"; }
function syncUnavailable(name) {
  return () => { throw new Error('child_process.' + name + ' is not supported in the offline engine (QuickJS cannot wait for the shell synchronously); use exec, execFile or spawn with a callback or a promise'); };
}
class ChildProcess extends EventEmitter {
  constructor() {
    super();
    this.pid = 5000 + nextExecId; this.exitCode = null; this.signalCode = null; this.killed = false;
    this.stdout = new EventEmitter(); this.stderr = new EventEmitter();
    for (const s of [this.stdout, this.stderr]) { s.setEncoding = (e) => { s._enc = e; return s; }; s.pipe = (d) => { s.on('data', (x) => d.write(x)); return d; }; s.resume = s.pause = () => s; }
    this._input = [];
    this.stdin = { write: (d) => { this._input.push(String(d)); return true; }, end: (d) => { if (d != null) this._input.push(String(d)); }, on() {}, once() {} };
  }
  kill() { this.killed = true; return true; }
  ref() { return this; } unref() { return this; }
}
function runChild(command, opts, inherit) {
  const child = new ChildProcess();
  setTimeout(() => {
    shellExec(command, Object.assign({}, opts, { input: child._input.join('') }), (r) => {
      child.exitCode = r.code;
      const emit = (s, text, fd) => {
        if (!text) return;
        if (inherit) { host.write(fd, text); return; }
        s.emit('data', s._enc ? text : Buffer.from(text));
      };
      emit(child.stdout, r.stdout, 1);
      emit(child.stderr, r.stderr, 2);
      child.stdout.emit('end'); child.stderr.emit('end');
      child.emit('exit', r.code, null);
      child.emit('close', r.code, null);
      if (child._done) child._done(r);
    });
  }, 0);
  return child;
}
function exec(command, opts, cb) {
  if (typeof opts === 'function') { cb = opts; opts = {}; }
  opts = opts || {};
  const child = runChild(command, opts, false);
  child._done = (r) => {
    if (!cb) return;
    const enc = opts.encoding === 'buffer' ? null : 'utf8';
    const o = enc ? r.stdout : Buffer.from(r.stdout), e = enc ? r.stderr : Buffer.from(r.stderr);
    if (r.code === 0) cb(null, o, e);
    else cb(Object.assign(new Error('Command failed: ' + command + '\n' + r.stderr), { code: r.code, killed: false, signal: null, cmd: command, stdout: o, stderr: e }), o, e);
  };
  return child;
}
exec[Symbol.for('nodejs.util.promisify.custom')] = (command, opts) => new Promise((res, rej) => {
  exec(command, opts, (err, stdout, stderr) => (err ? rej(err) : res({ stdout, stderr })));
});
function execFile(file, args, opts, cb) {
  if (typeof args === 'function') { cb = args; args = []; opts = {}; }
  else if (typeof opts === 'function') { cb = opts; opts = Array.isArray(args) ? {} : args; if (!Array.isArray(args)) args = []; }
  return exec([file].concat(args || []).map(shellQuote).join(' '), opts, cb);
}
execFile[Symbol.for('nodejs.util.promisify.custom')] = (file, args, opts) => new Promise((res, rej) => {
  execFile(file, args || [], opts || {}, (err, stdout, stderr) => (err ? rej(err) : res({ stdout, stderr })));
});
function spawn(cmd, args, opts) {
  if (!Array.isArray(args)) { opts = args; args = []; }
  opts = opts || {};
  const line = opts.shell ? [cmd].concat(args).join(' ') : [cmd].concat(args).map(shellQuote).join(' ');
  const inherit = opts.stdio === 'inherit' || (Array.isArray(opts.stdio) && opts.stdio[1] === 'inherit');
  return runChild(line, opts, inherit);
}
const child_process = {
  exec, execFile, spawn, ChildProcess,
  fork: syncUnavailable('fork'),
  execSync: syncUnavailable('execSync'), execFileSync: syncUnavailable('execFileSync'), spawnSync: syncUnavailable('spawnSync'),
};
`;
