import 'client-only';
/**
 * JavaScript source evaluated inside QuickJS before a script runs (part 1 of 4): text and
 * bytes (TextEncoder/Decoder, Buffer, base64), util.inspect/format, EventEmitter, path.
 * It is plain ES2022 kept as a string so the bundler never rewrites it; it runs inside the
 * function built by `bootstrap.ts`, where `host` (the host functions) and `config` are in scope.
 * No backticks or `${` below: this is a template string.
 */
export const BOOTSTRAP_CORE = String.raw`
const G = globalThis;
const internal = Object.create(null);
Object.defineProperty(G, '__node_internal__', { value: internal });

// ── bytes and text ─────────────────────────────────────────────────────────
function toU8(v) {
  if (v instanceof Uint8Array) return v;
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  throw new TypeError('expected a Buffer, TypedArray or ArrayBuffer');
}
function utf8Encode(s) { return new Uint8Array(host.encode(String(s))); }
function utf8Decode(v) { const u = toU8(v); return host.decode(u.buffer, u.byteOffset, u.byteLength); }
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B64R = new Int16Array(256).fill(-1);
for (let i = 0; i < 64; i++) B64R[B64.charCodeAt(i)] = i;
B64R[45] = 62; B64R[95] = 63; // base64url
function b64Encode(u, url) {
  let out = '';
  let i = 0;
  for (; i + 2 < u.length; i += 3) {
    const n = (u[i] << 16) | (u[i + 1] << 8) | u[i + 2];
    out += B64[n >> 18] + B64[(n >> 12) & 63] + B64[(n >> 6) & 63] + B64[n & 63];
  }
  if (i < u.length) {
    const n = (u[i] << 16) | ((u[i + 1] || 0) << 8);
    out += B64[n >> 18] + B64[(n >> 12) & 63] + (i + 1 < u.length ? B64[(n >> 6) & 63] : '=') + '=';
  }
  return url ? out.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '') : out;
}
function b64Decode(s) {
  const bytes = [];
  let acc = 0, bits = 0;
  for (let i = 0; i < s.length; i++) {
    const v = B64R[s.charCodeAt(i) & 255];
    if (v < 0) continue;
    acc = (acc << 6) | v; bits += 6;
    if (bits >= 8) { bits -= 8; bytes.push((acc >> bits) & 255); }
  }
  return Uint8Array.from(bytes);
}
function normEnc(enc) {
  const e = String(enc || 'utf8').toLowerCase();
  if (e === 'utf-8') return 'utf8';
  if (e === 'binary') return 'latin1';
  if (e === 'ucs2' || e === 'ucs-2' || e === 'utf-16le') return 'utf16le';
  return e;
}
function encodeString(s, enc) {
  s = String(s);
  switch (normEnc(enc)) {
    case 'utf8': return utf8Encode(s);
    case 'hex': { const n = s.length >> 1, u = new Uint8Array(n); for (let i = 0; i < n; i++) u[i] = parseInt(s.substr(i * 2, 2), 16); return u; }
    case 'base64': case 'base64url': return b64Decode(s);
    case 'latin1': case 'ascii': { const u = new Uint8Array(s.length); for (let i = 0; i < s.length; i++) u[i] = s.charCodeAt(i); return u; }
    case 'utf16le': { const u = new Uint8Array(s.length * 2); for (let i = 0; i < s.length; i++) { const c = s.charCodeAt(i); u[i * 2] = c & 255; u[i * 2 + 1] = c >> 8; } return u; }
    default: throw new TypeError('Unknown encoding: ' + enc);
  }
}
function decodeBytes(u, enc) {
  switch (normEnc(enc)) {
    case 'utf8': return utf8Decode(u);
    case 'hex': { let s = ''; for (let i = 0; i < u.length; i++) s += (u[i] < 16 ? '0' : '') + u[i].toString(16); return s; }
    case 'base64': return b64Encode(u, false);
    case 'base64url': return b64Encode(u, true);
    case 'latin1': { let s = ''; for (let i = 0; i < u.length; i += 8192) s += String.fromCharCode.apply(null, u.subarray(i, i + 8192)); return s; }
    case 'ascii': { let s = ''; for (let i = 0; i < u.length; i++) s += String.fromCharCode(u[i] & 127); return s; }
    case 'utf16le': { let s = ''; for (let i = 0; i + 1 < u.length; i += 2) s += String.fromCharCode(u[i] | (u[i + 1] << 8)); return s; }
    default: throw new TypeError('Unknown encoding: ' + enc);
  }
}
class TextEncoder {
  get encoding() { return 'utf-8'; }
  encode(s) { return utf8Encode(s === undefined ? '' : s); }
  encodeInto(s, dest) { const u = utf8Encode(s); const n = Math.min(u.length, dest.length); dest.set(u.subarray(0, n)); return { read: s.length, written: n }; }
}
class TextDecoder {
  constructor(label) { this.encoding = normEnc(label || 'utf8') === 'utf8' ? 'utf-8' : String(label); }
  decode(v) { return v === undefined ? '' : decodeBytes(toU8(v), this.encoding); }
}

class Buffer extends Uint8Array {
  static from(v, a, b) {
    if (typeof v === 'string') return Buffer._wrap(encodeString(v, a));
    if (v instanceof ArrayBuffer) { const off = a || 0; return new Buffer(v, off, b === undefined ? v.byteLength - off : b); }
    if (ArrayBuffer.isView(v)) { const u = new Buffer(v.byteLength); u.set(toU8(v)); return u; }
    if (v && typeof v === 'object') {
      if (v.type === 'Buffer' && Array.isArray(v.data)) return Buffer.from(v.data);
      if (typeof v.length === 'number') { const u = new Buffer(v.length); for (let i = 0; i < v.length; i++) u[i] = v[i] & 255; return u; }
    }
    throw new TypeError('The first argument must be of type string or an instance of Buffer, ArrayBuffer, or Array or an Array-like Object.');
  }
  static _wrap(u) { return new Buffer(u.buffer, u.byteOffset, u.byteLength); }
  static alloc(n, fill, enc) { const b = new Buffer(n); if (fill !== undefined && fill !== 0) b.fill(fill, 0, n, enc); return b; }
  static allocUnsafe(n) { return new Buffer(n); }
  static allocUnsafeSlow(n) { return new Buffer(n); }
  static isBuffer(b) { return b instanceof Buffer; }
  static isEncoding(e) { return ['utf8', 'hex', 'base64', 'base64url', 'latin1', 'ascii', 'utf16le'].includes(normEnc(e)); }
  static byteLength(s, enc) { return typeof s === 'string' ? encodeString(s, enc).length : s.byteLength; }
  static concat(list, total) {
    if (total === undefined) total = list.reduce((n, b) => n + b.length, 0);
    const out = Buffer.alloc(total);
    let off = 0;
    for (const b of list) { if (off >= total) break; const u = toU8(b).subarray(0, total - off); out.set(u, off); off += u.length; }
    return out;
  }
  static compare(a, b) { return Buffer.prototype.compare.call(a, b); }
  toString(enc, start, end) {
    const u = start !== undefined || end !== undefined ? this.subarray(start || 0, end === undefined ? this.length : end) : this;
    return decodeBytes(u, enc);
  }
  toJSON() { return { type: 'Buffer', data: Array.from(this) }; }
  equals(o) { return this.compare(o) === 0; }
  compare(o) {
    const a = this, b = toU8(o), n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
    return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
  }
  slice(s, e) { return this.subarray(s, e); }
  write(str, off, len, enc) {
    if (typeof off === 'string') { enc = off; off = 0; len = undefined; }
    else if (typeof len === 'string') { enc = len; len = undefined; }
    off = off || 0;
    const u = encodeString(str, enc).subarray(0, len === undefined ? this.length - off : len);
    this.set(u.subarray(0, this.length - off), off);
    return Math.min(u.length, this.length - off);
  }
  fill(v, s, e, enc) {
    if (typeof s === 'string') { enc = s; s = 0; e = this.length; }
    s = s || 0; e = e === undefined ? this.length : e;
    if (typeof v === 'number') return Uint8Array.prototype.fill.call(this, v, s, e);
    const u = typeof v === 'string' ? encodeString(v, enc) : toU8(v);
    if (u.length === 0) return Uint8Array.prototype.fill.call(this, 0, s, e);
    for (let i = s, j = 0; i < e; i++, j = (j + 1) % u.length) this[i] = u[j];
    return this;
  }
  indexOf(v, from, enc) {
    if (typeof v === 'number') return Uint8Array.prototype.indexOf.call(this, v, from);
    const n = typeof v === 'string' ? encodeString(v, enc) : toU8(v);
    outer: for (let i = from || 0; i <= this.length - n.length; i++) {
      for (let j = 0; j < n.length; j++) if (this[i + j] !== n[j]) continue outer;
      return i;
    }
    return -1;
  }
  includes(v, from, enc) { return this.indexOf(v, from, enc) !== -1; }
  copy(target, ts, ss, se) {
    ts = ts || 0; ss = ss || 0; se = se === undefined ? this.length : se;
    const part = this.subarray(ss, Math.min(se, ss + target.length - ts));
    target.set(part, ts);
    return part.length;
  }
  _dv() { return new DataView(this.buffer, this.byteOffset, this.byteLength); }
  readUInt8(o) { return this[o || 0]; }
  readInt8(o) { return this._dv().getInt8(o || 0); }
  readUInt16LE(o) { return this._dv().getUint16(o || 0, true); }
  readUInt16BE(o) { return this._dv().getUint16(o || 0, false); }
  readInt16LE(o) { return this._dv().getInt16(o || 0, true); }
  readInt16BE(o) { return this._dv().getInt16(o || 0, false); }
  readUInt32LE(o) { return this._dv().getUint32(o || 0, true); }
  readUInt32BE(o) { return this._dv().getUint32(o || 0, false); }
  readInt32LE(o) { return this._dv().getInt32(o || 0, true); }
  readInt32BE(o) { return this._dv().getInt32(o || 0, false); }
  readFloatLE(o) { return this._dv().getFloat32(o || 0, true); }
  readDoubleLE(o) { return this._dv().getFloat64(o || 0, true); }
  readBigUInt64LE(o) { return this._dv().getBigUint64(o || 0, true); }
  writeUInt8(v, o) { this[o || 0] = v; return (o || 0) + 1; }
  writeUInt16LE(v, o) { this._dv().setUint16(o || 0, v, true); return (o || 0) + 2; }
  writeUInt16BE(v, o) { this._dv().setUint16(o || 0, v, false); return (o || 0) + 2; }
  writeUInt32LE(v, o) { this._dv().setUint32(o || 0, v, true); return (o || 0) + 4; }
  writeUInt32BE(v, o) { this._dv().setUint32(o || 0, v, false); return (o || 0) + 4; }
  writeInt32LE(v, o) { this._dv().setInt32(o || 0, v, true); return (o || 0) + 4; }
  writeDoubleLE(v, o) { this._dv().setFloat64(o || 0, v, true); return (o || 0) + 8; }
}
for (const name of ['readUInt8', 'readUInt16LE', 'readUInt16BE', 'readUInt32LE', 'readUInt32BE', 'writeUInt8', 'writeUInt16LE', 'writeUInt16BE', 'writeUInt32LE', 'writeUInt32BE']) {
  Buffer.prototype[name.replace('UInt', 'Uint')] = Buffer.prototype[name];
}

// ── inspect / format ───────────────────────────────────────────────────────
const IDENT = /^[A-Za-z_$][\w$]*$/;
function quote(s) {
  const q = s.includes("'") && !s.includes('"') ? '"' : "'";
  return q + s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\t/g, '\\t').replace(new RegExp(q, 'g'), '\\' + q) + q;
}
function fnName(f) { return f.name ? f.name : '(anonymous)'; }
function ctorName(o) {
  const p = Object.getPrototypeOf(o);
  if (p === null) return null;
  const c = p.constructor;
  return c && typeof c === 'function' && c.name ? c.name : '';
}
/** Node shows at most 10 frames (Error.stackTraceLimit); the bootstrap's own frames are noise. */
function trimStack(stack) {
  const lines = stack.replace(/\s+$/, '').split('\n').filter((l) => !l.includes('(node:internal/'));
  return lines.length > 10 ? lines.slice(0, 10).concat(['    ... ' + (lines.length - 10) + ' more frames']).join('\n') : lines.join('\n');
}
function formatError(e) {
  let head;
  try { head = String(e.name || 'Error') + (e.message ? ': ' + e.message : ''); } catch (_) { head = 'Error'; }
  const stack = typeof e.stack === 'string' ? trimStack(e.stack) : '';
  if (stack.startsWith(head)) return stack;
  return stack ? head + '\n' + stack : head;
}
function inspect(v, opts) {
  const o = Object.assign({ depth: 2, breakLength: 80, showHidden: false, maxArrayLength: 100, maxStringLength: 10000, sorted: false }, opts && typeof opts === 'object' ? opts : {});
  return fmtValue(v, o, 0, []);
}
inspect.custom = Symbol.for('nodejs.util.inspect.custom');
inspect.defaultOptions = { depth: 2 };
function fmtPrimitive(v) {
  switch (typeof v) {
    case 'string': return quote(v);
    case 'number': return Object.is(v, -0) ? '-0' : String(v);
    case 'bigint': return String(v) + 'n';
    case 'symbol': return v.toString();
    case 'undefined': return 'undefined';
    case 'boolean': return String(v);
    default: return v === null ? 'null' : undefined;
  }
}
function fmtValue(v, o, level, seen) {
  const prim = fmtPrimitive(v);
  if (prim !== undefined) return prim;
  if (typeof v === 'object' || typeof v === 'function') {
    const custom = v[inspect.custom];
    if (typeof custom === 'function' && custom !== inspect) {
      const r = custom.call(v, o.depth - level, o, inspect);
      if (r !== v) return typeof r === 'string' ? r : fmtValue(r, o, level, seen);
    }
  }
  if (seen.includes(v)) return '[Circular *1]';
  if (typeof v === 'function') {
    const src = Function.prototype.toString.call(v);
    const base = src.startsWith('class') ? '[class ' + fnName(v) + ']' : '[' + (v.constructor && v.constructor.name === 'AsyncFunction' ? 'AsyncFunction' : 'Function') + ': ' + fnName(v) + ']';
    const keys = Object.keys(v);
    if (keys.length === 0 || level > o.depth) return base;
    return wrapEntries(base + ' {', '}', keys.map((k) => fmtKey(k) + ': ' + fmtValue(v[k], o, level + 1, seen.concat([v]))), level, o);
  }
  if (v instanceof Error) {
    const keys = Object.keys(v).filter((k) => k !== 'stack' && k !== 'message');
    const base = formatError(v);
    if (keys.length === 0) return base;
    return wrapEntries(base + ' {', '}', keys.map((k) => fmtKey(k) + ': ' + fmtValue(v[k], o, level + 1, seen.concat([v]))), level, o);
  }
  if (v instanceof Date) return isNaN(v.getTime()) ? 'Invalid Date' : v.toISOString();
  if (v instanceof RegExp) return String(v);
  if (v instanceof Promise) return 'Promise {}';
  if (v instanceof WeakMap || v instanceof WeakSet) return (v instanceof WeakMap ? 'WeakMap' : 'WeakSet') + ' { <items unknown> }';
  if (v instanceof Buffer) {
    let hex = '';
    for (let i = 0; i < Math.min(v.length, 50); i++) hex += ' ' + (v[i] < 16 ? '0' : '') + v[i].toString(16);
    return '<Buffer' + hex + (v.length > 50 ? ' ... ' + (v.length - 50) + ' more bytes' : '') + '>';
  }
  if (v instanceof ArrayBuffer) return 'ArrayBuffer { byteLength: ' + v.byteLength + ' }';
  const ctor = ctorName(v);
  if (level > o.depth) {
    if (Array.isArray(v)) return '[Array]';
    return '[' + (ctor === null ? 'Object: null prototype' : ctor || 'Object') + ']';
  }
  const nseen = seen.concat([v]);
  const sub = (x) => fmtValue(x, o, level + 1, nseen);
  if (Array.isArray(v) || ArrayBuffer.isView(v)) {
    const n = Math.min(v.length, o.maxArrayLength);
    const items = [];
    for (let i = 0; i < n; i++) items.push(sub(v[i]));
    if (v.length > n) items.push('... ' + (v.length - n) + ' more item' + (v.length - n > 1 ? 's' : ''));
    if (Array.isArray(v)) for (const k of Object.keys(v)) if (!/^\d+$/.test(k)) items.push(fmtKey(k) + ': ' + sub(v[k]));
    const prefix = Array.isArray(v) ? (ctor && ctor !== 'Array' ? ctor + '(' + v.length + ') ' : '') : ctor + '(' + v.length + ') ';
    return wrapEntries(prefix + '[', ']', items, level, o);
  }
  if (v instanceof Map) {
    const items = [];
    for (const [k, x] of v) items.push(sub(k) + ' => ' + sub(x));
    return wrapEntries('Map(' + v.size + ') {', '}', items, level, o);
  }
  if (v instanceof Set) {
    const items = [];
    for (const x of v) items.push(sub(x));
    return wrapEntries('Set(' + v.size + ') {', '}', items, level, o);
  }
  const keys = Object.keys(v);
  if (o.sorted) keys.sort();
  const items = [];
  for (const k of keys) {
    const d = Object.getOwnPropertyDescriptor(v, k);
    if (d && (d.get || d.set)) items.push(fmtKey(k) + ': ' + (d.get && d.set ? '[Getter/Setter]' : d.get ? '[Getter]' : '[Setter]'));
    else items.push(fmtKey(k) + ': ' + sub(v[k]));
  }
  for (const s of Object.getOwnPropertySymbols(v)) {
    if (Object.prototype.propertyIsEnumerable.call(v, s)) items.push('[' + s.toString() + ']: ' + sub(v[s]));
  }
  const tag = v[Symbol.toStringTag];
  const prefix = ctor === null ? '[Object: null prototype] ' : ctor && ctor !== 'Object' ? ctor + ' ' : tag ? 'Object [' + tag + '] ' : '';
  return wrapEntries(prefix + '{', '}', items, level, o);
}
function fmtKey(k) { return IDENT.test(k) ? k : quote(k); }
function wrapEntries(open, close, items, level, o) {
  if (items.length === 0) return open.endsWith('[') ? open + close : open + close;
  const single = open + ' ' + items.join(', ') + ' ' + close;
  if (single.length + level * 2 <= o.breakLength - 4 && !items.some((x) => x.includes('\n'))) return single;
  const pad = '  '.repeat(level + 1);
  return open + '\n' + items.map((x) => pad + x.replace(/\n/g, '\n' + pad)).join(',\n') + '\n' + '  '.repeat(level) + close;
}
function format(f, ...args) {
  if (typeof f !== 'string') return [f].concat(args).map((a) => (typeof a === 'string' ? a : inspect(a))).join(' ');
  let i = 0;
  let out = args.length === 0 ? f : f.replace(/%[sdifjoOc%]/g, (m) => {
    if (m === '%%') return '%';
    if (i >= args.length) return m;
    const a = args[i++];
    switch (m) {
      case '%s': return typeof a === 'string' ? a : typeof a === 'bigint' ? a + 'n' : typeof a === 'object' && a !== null ? inspect(a, { depth: 0 }) : String(a);
      case '%d': return typeof a === 'bigint' ? a + 'n' : typeof a === 'object' && a !== null ? 'NaN' : String(Number(a));
      case '%i': return typeof a === 'bigint' ? a + 'n' : String(parseInt(a));
      case '%f': return String(parseFloat(a));
      case '%j': try { return JSON.stringify(a); } catch (_) { return '[Circular]'; }
      case '%o': return inspect(a, { showHidden: true, depth: 4 });
      case '%O': return inspect(a);
      default: return '';
    }
  });
  for (; i < args.length; i++) out += ' ' + (typeof args[i] === 'string' ? args[i] : inspect(args[i]));
  return out;
}

// ── events ─────────────────────────────────────────────────────────────────
class EventEmitter {
  constructor() { this._events = Object.create(null); this._max = 10; }
  _list(n) { if (!this._events) this._events = Object.create(null); return this._events[n] || (this._events[n] = []); }
  on(n, fn) { this.emit('newListener', n, fn); this._list(n).push(fn); return this; }
  addListener(n, fn) { return this.on(n, fn); }
  prependListener(n, fn) { this._list(n).unshift(fn); return this; }
  once(n, fn) { const w = (...a) => { this.off(n, w); fn.apply(this, a); }; w.listener = fn; return this.on(n, w); }
  prependOnceListener(n, fn) { const w = (...a) => { this.off(n, w); fn.apply(this, a); }; w.listener = fn; return this.prependListener(n, w); }
  off(n, fn) { const l = this._list(n); const i = l.findIndex((x) => x === fn || x.listener === fn); if (i >= 0) l.splice(i, 1); return this; }
  removeListener(n, fn) { return this.off(n, fn); }
  removeAllListeners(n) { if (n === undefined) this._events = Object.create(null); else delete this._list(n) && delete this._events[n]; return this; }
  emit(n, ...a) {
    const l = this._events && this._events[n];
    if (!l || l.length === 0) {
      if (n === 'error') throw a[0] instanceof Error ? a[0] : new Error('Unhandled error. (' + inspect(a[0]) + ')');
      return false;
    }
    for (const fn of l.slice()) fn.apply(this, a);
    return true;
  }
  listeners(n) { return this._list(n).map((x) => x.listener || x); }
  rawListeners(n) { return this._list(n).slice(); }
  listenerCount(n) { return this._events && this._events[n] ? this._events[n].length : 0; }
  eventNames() { return Object.keys(this._events || {}).filter((k) => this._events[k].length > 0); }
  setMaxListeners(n) { this._max = n; return this; }
  getMaxListeners() { return this._max; }
}
EventEmitter.EventEmitter = EventEmitter;
EventEmitter.defaultMaxListeners = 10;
EventEmitter.once = (em, n) => new Promise((res, rej) => {
  const onErr = (e) => { em.off(n, onOk); rej(e); };
  const onOk = (...a) => { if (n !== 'error') em.off('error', onErr); res(a); };
  em.once(n, onOk);
  if (n !== 'error') em.once('error', onErr);
});
EventEmitter.on = (em, n) => {
  const queue = [], waiting = [];
  em.on(n, (...a) => { if (waiting.length) waiting.shift()({ value: a, done: false }); else queue.push(a); });
  return { [Symbol.asyncIterator]() { return this; }, next() { return queue.length ? Promise.resolve({ value: queue.shift(), done: false }) : new Promise((r) => waiting.push(r)); }, return() { return Promise.resolve({ done: true }); } };
};
EventEmitter.listenerCount = (em, n) => em.listenerCount(n);

// ── path (POSIX) ───────────────────────────────────────────────────────────
function normalizeSegments(p, absolute) {
  const out = [];
  for (const s of p.split('/')) {
    if (s === '' || s === '.') continue;
    if (s === '..') { if (out.length && out[out.length - 1] !== '..') out.pop(); else if (!absolute) out.push('..'); }
    else out.push(s);
  }
  return out;
}
function checkPath(p, name) { if (typeof p !== 'string') { const e = new TypeError('The "' + (name || 'path') + '" argument must be of type string. Received ' + inspect(p)); e.code = 'ERR_INVALID_ARG_TYPE'; throw e; } }
const path = {
  sep: '/', delimiter: ':',
  normalize(p) {
    checkPath(p);
    if (p === '') return '.';
    const abs = p.startsWith('/'), trail = p.endsWith('/');
    let r = normalizeSegments(p, abs).join('/');
    if (r === '' && !abs) r = '.';
    if (r !== '' && trail) r += '/';
    return (abs ? '/' : '') + r;
  },
  join(...parts) { for (const p of parts) checkPath(p); const j = parts.filter((x) => x !== '').join('/'); return j === '' ? '.' : path.normalize(j); },
  resolve(...parts) {
    let r = '';
    for (let i = parts.length - 1; i >= 0 && !r.startsWith('/'); i--) { checkPath(parts[i]); if (parts[i]) r = parts[i] + (r ? '/' + r : ''); }
    if (!r.startsWith('/')) r = process.cwd() + (r ? '/' + r : '');
    return '/' + normalizeSegments(r, true).join('/');
  },
  isAbsolute(p) { checkPath(p); return p.startsWith('/'); },
  relative(from, to) {
    const a = path.resolve(from).split('/').filter(Boolean), b = path.resolve(to).split('/').filter(Boolean);
    let i = 0;
    while (i < a.length && i < b.length && a[i] === b[i]) i++;
    return a.slice(i).map(() => '..').concat(b.slice(i)).join('/');
  },
  dirname(p) {
    checkPath(p);
    if (p === '') return '.';
    const s = p.replace(/\/+$/, '');
    if (s === '') return '/';
    const i = s.lastIndexOf('/');
    if (i < 0) return '.';
    return i === 0 ? '/' : s.slice(0, i).replace(/\/+$/, '') || '/';
  },
  basename(p, ext) {
    checkPath(p);
    const s = p.replace(/\/+$/, '');
    let b = s.slice(s.lastIndexOf('/') + 1);
    if (ext && b.endsWith(ext) && b !== ext) b = b.slice(0, -ext.length);
    return b;
  },
  extname(p) { const b = path.basename(p); const i = b.lastIndexOf('.'); return i <= 0 ? '' : b.slice(i); },
  parse(p) {
    const root = p.startsWith('/') ? '/' : '', base = path.basename(p), ext = path.extname(p);
    let dir = path.dirname(p);
    if (dir === '.' && !p.includes('/')) dir = '';
    return { root, dir, base, ext, name: ext ? base.slice(0, -ext.length) : base };
  },
  format(o) { const dir = o.dir || o.root || ''; const base = o.base || (o.name || '') + (o.ext || ''); return dir ? (dir === o.root ? dir + base : dir + '/' + base) : base; },
  toNamespacedPath(p) { return p; },
  matchesGlob(p, g) { return globRe(g).test(p); },
};
path.posix = path;
path.win32 = path;
function globRe(glob) {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*') { if (glob[i + 1] === '*') { const sl = glob[i + 2] === '/'; re += sl ? '(?:.*/)?' : '.*'; i += sl ? 2 : 1; } else re += '[^/]*'; }
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^$(){}|[\]\\]/g, '\\$&');
  }
  return new RegExp('^' + re + '$');
}
`;
