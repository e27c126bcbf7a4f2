import 'client-only';
/**
 * Bootstrap part 2 of 4: process, console, timers (driven by the host's event loop), and the
 * web globals QuickJS lacks (queueMicrotask, URL, performance, crypto, AbortController…).
 * Plain JS in a template string: no backticks or `${` below.
 */
export const BOOTSTRAP_PROCESS = String.raw`
// ── process ────────────────────────────────────────────────────────────────
class ProcessExit { constructor(code) { this.code = code; } }
let cwd = config.cwd;
let exiting = false;
function makeStream(fd) {
  const s = new EventEmitter();
  s.fd = fd; s.isTTY = false; s.columns = 80; s.rows = 24; s.writable = true;
  s.write = (chunk, enc, cb) => {
    if (typeof enc === 'function') cb = enc;
    if (typeof chunk === 'string') host.write(fd, chunk);
    else { const u = toU8(chunk); host.writeBytes(fd, u.buffer, u.byteOffset, u.byteLength); }
    if (typeof cb === 'function') queueMicrotask(cb);
    return true;
  };
  s.end = (chunk, enc, cb) => { if (typeof chunk === 'function') cb = chunk; else if (chunk != null) s.write(chunk, enc); if (typeof cb === 'function') queueMicrotask(cb); return s; };
  s.cork = s.uncork = () => {};
  s.setDefaultEncoding = () => s;
  s.getColorDepth = () => 1;
  s.hasColors = () => false;
  return s;
}
const process = new EventEmitter();
Object.assign(process, {
  title: 'node', version: 'v22.12.0', arch: 'x64', platform: 'linux', pid: 4242, ppid: 1,
  versions: { node: '22.12.0', quickjs: '2025-09-13', modules: '127' },
  release: { name: 'node' },
  features: {},
  config: { variables: {} },
  execPath: '/usr/local/bin/node', argv0: 'node', execArgv: [],
  argv: config.argv.slice(),
  env: Object.assign(Object.create(null), config.env),
  exitCode: undefined,
  cwd() { return cwd; },
  chdir(d) {
    const target = path.resolve(d);
    const st = JSON.parse(host.fs('stat', JSON.stringify([target])));
    if (st.err) { const e = new Error('ENOENT: no such file or directory, chdir ' + quote(cwd) + ' -> ' + quote(String(d))); e.code = 'ENOENT'; e.syscall = 'chdir'; throw e; }
    if (st.ok.kind !== 'dir') { const e = new Error('ENOTDIR: not a directory, chdir ' + quote(cwd) + ' -> ' + quote(String(d))); e.code = 'ENOTDIR'; throw e; }
    cwd = target;
  },
  exit(code) {
    if (code !== undefined) process.exitCode = code;
    const c = (process.exitCode | 0) || 0;
    if (!exiting) { exiting = true; try { process.emit('exit', c); } catch (_) { /* exit handlers cannot stop exit */ } }
    host.exit(c);
    throw new ProcessExit(c);
  },
  abort() { host.exit(134); throw new ProcessExit(134); },
  kill() { return true; },
  nextTick(fn, ...a) { queueMicrotask(() => fn(...a)); },
  hrtime: Object.assign((prev) => {
    const t = host.now(), s = Math.floor(t / 1000), ns = Math.floor((t % 1000) * 1e6);
    if (!prev) return [s, ns];
    let ds = s - prev[0], dn = ns - prev[1];
    if (dn < 0) { ds--; dn += 1e9; }
    return [ds, dn];
  }, { bigint: () => BigInt(Math.floor(host.now() * 1e6)) }),
  uptime() { return host.now() / 1000; },
  memoryUsage: Object.assign(() => ({ rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 }), { rss: () => 0 }),
  cpuUsage() { return { user: Math.floor(host.now() * 1000), system: 0 }; },
  resourceUsage() { return {}; },
  umask() { return 0o22; },
  getuid() { return 1000; }, geteuid() { return 1000; }, getgid() { return 1000; }, getegid() { return 1000; },
  emitWarning(w, type) { host.write(2, '(node) ' + (typeof w === 'string' ? (type && typeof type === 'string' ? type : 'Warning') + ': ' + w : formatError(w)) + '\n'); },
  binding() { throw new Error('process.binding is not supported'); },
  stdout: makeStream(1),
  stderr: makeStream(2),
});
process.stdin = makeStdin();
internal.emitExit = (code) => {
  if (!exiting) { exiting = true; process.emit('exit', code); }
  return (process.exitCode | 0) || code;
};
internal.exitCode = () => (process.exitCode | 0) || 0;
internal.isProcessExit = (e) => e instanceof ProcessExit;

function makeStdin() {
  const s = new EventEmitter();
  s.fd = 0; s.isTTY = false; s.readable = true;
  let enc = null, flowing = false, done = false;
  const data = () => { const b = Buffer._wrap(new Uint8Array(host.readStdin())); return enc ? b.toString(enc) : b; };
  const start = () => {
    if (flowing || done) return;
    flowing = true;
    setTimeout(() => {
      const d = data();
      done = true;
      if (d.length > 0) s.emit('data', d);
      s.emit('end');
      s.emit('close');
    }, 0);
  };
  s.setEncoding = (e) => { enc = e || 'utf8'; return s; };
  s.resume = () => { start(); return s; };
  s.pause = () => s;
  s.ref = s.unref = () => s;
  s.setRawMode = () => s;
  s.read = () => null;
  s.pipe = (dest) => { s.on('data', (d) => dest.write(d)); s.on('end', () => { if (dest !== process.stdout && dest !== process.stderr) dest.end(); }); start(); return dest; };
  const on = s.on.bind(s);
  s.on = s.addListener = (n, fn) => { on(n, fn); if (n === 'data' || n === 'end' || n === 'readable') start(); return s; };
  s[Symbol.asyncIterator] = async function* () { const d = data(); done = true; if (d.length > 0) yield d; };
  return s;
}

// ── console ────────────────────────────────────────────────────────────────
let groupIndent = '';
const counts = new Map(), timersLabel = new Map();
function out(fd, text) { host.write(fd, (groupIndent ? groupIndent + text.replace(/\n/g, '\n' + groupIndent) : text) + '\n'); }
const console = {
  log: (...a) => out(1, format(...a)),
  info: (...a) => out(1, format(...a)),
  debug: (...a) => out(1, format(...a)),
  warn: (...a) => out(2, format(...a)),
  error: (...a) => out(2, format(...a)),
  trace: (...a) => out(2, 'Trace' + (a.length ? ': ' + format(...a) : '') + '\n' + (new Error().stack || '').replace(/\s+$/, '')),
  dir: (v, o) => out(1, inspect(v, o)),
  dirxml: (...a) => out(1, format(...a)),
  table: (v) => out(1, inspect(v)),
  assert: (c, ...a) => { if (!c) out(2, 'Assertion failed' + (a.length ? ': ' + format(...a) : '')); },
  count: (l) => { l = l === undefined ? 'default' : String(l); counts.set(l, (counts.get(l) || 0) + 1); out(1, l + ': ' + counts.get(l)); },
  countReset: (l) => counts.delete(l === undefined ? 'default' : String(l)),
  group: (...a) => { if (a.length) out(1, format(...a)); groupIndent += '  '; },
  groupCollapsed: (...a) => console.group(...a),
  groupEnd: () => { groupIndent = groupIndent.slice(2); },
  time: (l) => timersLabel.set(l === undefined ? 'default' : String(l), host.now()),
  timeEnd: (l) => { l = l === undefined ? 'default' : String(l); const t = timersLabel.get(l); if (t !== undefined) { out(1, l + ': ' + (host.now() - t).toFixed(3) + 'ms'); timersLabel.delete(l); } },
  timeLog: (l, ...a) => { l = l === undefined ? 'default' : String(l); const t = timersLabel.get(l); if (t !== undefined) out(1, l + ': ' + (host.now() - t).toFixed(3) + 'ms' + (a.length ? ' ' + format(...a) : '')); },
  clear: () => {},
};

// ── timers: the host keeps due times and calls internal.dispatch('timer', id) ───
let nextTimerId = 1;
const timerFns = new Map();
class Timeout {
  constructor(id, kind) { this._id = id; this._kind = kind; this._ref = true; }
  ref() { this._ref = true; host.timerRef(this._id, true); return this; }
  unref() { this._ref = false; host.timerRef(this._id, false); return this; }
  hasRef() { return this._ref; }
  refresh() { const t = timerFns.get(this._id); if (t) host.timer(this._id, t.ms); return this; }
  close() { clearTimeout(this); return this; }
  [Symbol.toPrimitive]() { return this._id; }
}
function addTimer(fn, ms, args, repeat, kind) {
  if (typeof fn !== 'function') { const e = new TypeError('The "callback" argument must be of type function. Received ' + inspect(fn)); e.code = 'ERR_INVALID_ARG_TYPE'; throw e; }
  ms = Number(ms);
  if (!(ms >= 1 && ms <= 2147483647)) ms = kind === 'immediate' ? 0 : 1;
  const id = nextTimerId++;
  timerFns.set(id, { fn, args, repeat, ms });
  host.timer(id, ms);
  return new Timeout(id, kind);
}
function clearTimer(t) {
  const id = t && typeof t === 'object' ? t._id : Number(t);
  if (timerFns.delete(id)) host.timerClear(id);
}
function setTimeout(fn, ms, ...args) { return addTimer(fn, ms, args, false, 'timeout'); }
function setInterval(fn, ms, ...args) { return addTimer(fn, ms, args, true, 'interval'); }
function setImmediate(fn, ...args) { return addTimer(fn, 0, args, false, 'immediate'); }
const clearTimeout = clearTimer, clearInterval = clearTimer, clearImmediate = clearTimer;
function queueMicrotask(fn) { Promise.resolve().then(fn); }

internal.dispatch = (kind, id, payload) => {
  if (kind === 'timer') {
    const t = timerFns.get(id);
    if (!t) return;
    if (t.repeat) host.timer(id, t.ms); else timerFns.delete(id);
    t.fn.apply(undefined, t.args);
  } else if (kind === 'exec') {
    const done = execCallbacks.get(id);
    execCallbacks.delete(id);
    if (done) done(JSON.parse(payload));
  }
};
const execCallbacks = new Map();
let nextExecId = 1;
/** Runs a command line in the shell; cb({ code, stdout, stderr }) once it ends. */
function shellExec(command, opts, cb) {
  const id = nextExecId++;
  execCallbacks.set(id, cb);
  const env = opts && opts.env ? opts.env : process.env;
  host.exec(id, String(command), opts && opts.cwd ? path.resolve(String(opts.cwd)) : cwd, JSON.stringify(env), opts && opts.input != null ? String(opts.input) : '');
  return id;
}

// ── web globals QuickJS does not have ──────────────────────────────────────
class URLSearchParams {
  constructor(init) {
    this._list = [];
    if (typeof init === 'string') {
      for (const part of init.replace(/^\?/, '').split('&')) {
        if (!part) continue;
        const i = part.indexOf('=');
        const dec = (s) => decodeURIComponent(s.replace(/\+/g, ' '));
        this._list.push(i < 0 ? [dec(part), ''] : [dec(part.slice(0, i)), dec(part.slice(i + 1))]);
      }
    } else if (init && typeof init === 'object') {
      for (const [k, v] of (Symbol.iterator in init ? init : Object.entries(init))) this._list.push([String(k), String(v)]);
    }
  }
  get(k) { const e = this._list.find((x) => x[0] === k); return e ? e[1] : null; }
  getAll(k) { return this._list.filter((x) => x[0] === k).map((x) => x[1]); }
  has(k) { return this._list.some((x) => x[0] === k); }
  set(k, v) { const i = this._list.findIndex((x) => x[0] === k); this.delete(k); this._list.splice(i < 0 ? this._list.length : i, 0, [String(k), String(v)]); }
  append(k, v) { this._list.push([String(k), String(v)]); }
  delete(k) { this._list = this._list.filter((x) => x[0] !== k); }
  forEach(fn) { for (const [k, v] of this._list) fn(v, k, this); }
  keys() { return this._list.map((x) => x[0])[Symbol.iterator](); }
  values() { return this._list.map((x) => x[1])[Symbol.iterator](); }
  entries() { return this._list.map((x) => [x[0], x[1]])[Symbol.iterator](); }
  [Symbol.iterator]() { return this.entries(); }
  get size() { return this._list.length; }
  toString() { return this._list.map(([k, v]) => encodeURIComponent(k) + '=' + encodeURIComponent(v)).join('&'); }
}
class URL {
  constructor(url, base) {
    url = String(url);
    const m = /^([a-zA-Z][a-zA-Z\d+.-]*:)(\/\/([^/?#]*))?([^?#]*)(\?[^#]*)?(#.*)?$/.exec(url);
    if (!m) {
      if (base === undefined) { const e = new TypeError('Invalid URL'); e.code = 'ERR_INVALID_URL'; e.input = url; throw e; }
      const b = new URL(base);
      let p = url.startsWith('/') ? url : url.startsWith('?') || url.startsWith('#') || url === '' ? b.pathname + url : b.pathname.replace(/[^/]*$/, '') + url;
      return new URL(b.protocol + '//' + b.host + p);
    }
    this.protocol = m[1].toLowerCase();
    const auth = m[3] || '';
    const at = auth.lastIndexOf('@');
    const hostPart = at >= 0 ? auth.slice(at + 1) : auth;
    const cred = at >= 0 ? auth.slice(0, at).split(':') : [];
    this.username = cred[0] || ''; this.password = cred[1] || '';
    this.host = hostPart.toLowerCase();
    const hp = /^(.*?)(?::(\d+))?$/.exec(this.host);
    this.hostname = hp[1]; this.port = hp[2] || '';
    let p = m[4] || (m[2] !== undefined ? '/' : '');
    if (m[2] !== undefined || p.startsWith('/')) p = '/' + normalizeSegments(p, true).join('/') + (p.length > 1 && p.endsWith('/') ? '/' : '');
    this.pathname = p;
    this.search = m[5] && m[5] !== '?' ? m[5] : '';
    this.hash = m[6] && m[6] !== '#' ? m[6] : '';
    this.searchParams = new URLSearchParams(this.search);
  }
  get origin() { return this.protocol === 'file:' ? 'null' : this.protocol + '//' + this.host; }
  get href() { const auth = this.username ? this.username + (this.password ? ':' + this.password : '') + '@' : ''; const sp = this.searchParams.toString(); return this.protocol + (this.host || this.protocol === 'file:' ? '//' + auth + this.host : '') + this.pathname + (sp ? '?' + sp : '') + this.hash; }
  toString() { return this.href; }
  toJSON() { return this.href; }
  static canParse(u, b) { try { new URL(u, b); return true; } catch (_) { return false; } }
}
class AbortSignal extends EventEmitter {
  constructor() { super(); this.aborted = false; this.reason = undefined; this.onabort = null; }
  addEventListener(n, fn) { this.on(n, fn); }
  removeEventListener(n, fn) { this.off(n, fn); }
  throwIfAborted() { if (this.aborted) throw this.reason; }
  static abort(r) { const c = new AbortController(); c.abort(r); return c.signal; }
  static timeout(ms) { const c = new AbortController(); setTimeout(() => c.abort(new Error('The operation was aborted due to timeout')), ms).unref(); return c.signal; }
}
class AbortController {
  constructor() { this.signal = new AbortSignal(); }
  abort(reason) {
    const s = this.signal;
    if (s.aborted) return;
    s.aborted = true;
    s.reason = reason === undefined ? Object.assign(new Error('This operation was aborted'), { name: 'AbortError', code: 20 }) : reason;
    const ev = { type: 'abort', target: s };
    if (typeof s.onabort === 'function') s.onabort(ev);
    s.emit('abort', ev);
  }
}
function structuredClone(v, seen) {
  seen = seen || new Map();
  if (typeof v !== 'object' || v === null) { if (typeof v === 'function' || typeof v === 'symbol') throw new Error('could not be cloned'); return v; }
  if (seen.has(v)) return seen.get(v);
  let r;
  if (v instanceof Date) r = new Date(v.getTime());
  else if (v instanceof RegExp) r = new RegExp(v.source, v.flags);
  else if (ArrayBuffer.isView(v)) r = v.slice();
  else if (v instanceof Map) { r = new Map(); seen.set(v, r); for (const [k, x] of v) r.set(structuredClone(k, seen), structuredClone(x, seen)); return r; }
  else if (v instanceof Set) { r = new Set(); seen.set(v, r); for (const x of v) r.add(structuredClone(x, seen)); return r; }
  else if (Array.isArray(v)) { r = []; seen.set(v, r); v.forEach((x, i) => { r[i] = structuredClone(x, seen); }); return r; }
  else if (v instanceof Error) { r = new v.constructor(v.message); r.stack = v.stack; }
  else { r = {}; seen.set(v, r); for (const k of Object.keys(v)) r[k] = structuredClone(v[k], seen); return r; }
  seen.set(v, r);
  return r;
}
const randomBytesU8 = (n) => new Uint8Array(host.random(n));
const webcrypto = {
  getRandomValues(a) { const u = toU8(a); u.set(randomBytesU8(u.length)); return a; },
  randomUUID() {
    const b = randomBytesU8(16);
    b[6] = (b[6] & 0x0f) | 0x40; b[8] = (b[8] & 0x3f) | 0x80;
    const h = decodeBytes(b, 'hex');
    return h.slice(0, 8) + '-' + h.slice(8, 12) + '-' + h.slice(12, 16) + '-' + h.slice(16, 20) + '-' + h.slice(20);
  },
};
const performance = { now: () => host.now(), timeOrigin: Date.now() - host.now(), mark() {}, measure() {}, toJSON() { return {}; } };
function notAvailable(what) { return () => { throw new Error(what + ' is not available in the offline engine (no network)'); }; }

Object.assign(G, {
  global: G, process, console, Buffer, TextEncoder, TextDecoder, URL, URLSearchParams, AbortController, AbortSignal,
  setTimeout, setInterval, setImmediate, clearTimeout, clearInterval, clearImmediate, queueMicrotask,
  structuredClone: (v) => structuredClone(v), performance, crypto: webcrypto,
  atob: (s) => decodeBytes(b64Decode(String(s)), 'latin1'),
  btoa: (s) => b64Encode(encodeString(String(s), 'latin1'), false),
  fetch: (...a) => Promise.reject(new TypeError('fetch failed: the offline engine has no network')),
  WebSocket: notAvailable('WebSocket'),
});
`;
