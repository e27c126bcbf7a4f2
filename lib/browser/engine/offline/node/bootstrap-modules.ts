import 'client-only';
/**
 * Bootstrap part 4 of 4: the other built-in modules (util, assert, os, url, readline, crypto…)
 * and CommonJS `require`.
 * ES modules are loaded by the host (QuickJS's module loader); they reach CommonJS modules and
 * built-ins through `internal.requireAbs` / `internal.builtin`.
 * Plain JS in a template string: no backticks or `${` below.
 */
export const BOOTSTRAP_MODULES = String.raw`
// ── util ───────────────────────────────────────────────────────────────────
function promisify(fn) {
  if (typeof fn !== 'function') throw new TypeError('The "original" argument must be of type function');
  const custom = fn[promisify.custom];
  if (typeof custom === 'function') return custom;
  return function (...args) { return new Promise((res, rej) => fn.call(this, ...args, (err, ...vals) => (err ? rej(err) : res(vals.length > 1 ? vals : vals[0])))); };
}
promisify.custom = Symbol.for('nodejs.util.promisify.custom');
function isDeepEqual(a, b, strict, seen) {
  if (strict ? Object.is(a, b) : a == b || (a !== a && b !== b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (strict && Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  seen = seen || [];
  if (seen.some(([x, y]) => x === a && y === b)) return true;
  seen = seen.concat([[a, b]]);
  if (a instanceof Date) return b instanceof Date && a.getTime() === b.getTime();
  if (a instanceof RegExp) return b instanceof RegExp && String(a) === String(b);
  if (a instanceof Error && (a.message !== b.message || a.name !== b.name)) return false;
  if (ArrayBuffer.isView(a)) { if (!ArrayBuffer.isView(b) || a.length !== b.length) return false; for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false; return true; }
  if (a instanceof Map) { if (!(b instanceof Map) || a.size !== b.size) return false; for (const [k, v] of a) if (!b.has(k) || !isDeepEqual(v, b.get(k), strict, seen)) return false; return true; }
  if (a instanceof Set) { if (!(b instanceof Set) || a.size !== b.size) return false; for (const v of a) if (!b.has(v) && ![...b].some((w) => isDeepEqual(v, w, strict, seen))) return false; return true; }
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a), kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) if (!Object.prototype.hasOwnProperty.call(b, k) || !isDeepEqual(a[k], b[k], strict, seen)) return false;
  return true;
}
const types = {
  isPromise: (v) => v instanceof Promise, isDate: (v) => v instanceof Date, isRegExp: (v) => v instanceof RegExp,
  isMap: (v) => v instanceof Map, isSet: (v) => v instanceof Set, isNativeError: (v) => v instanceof Error,
  isTypedArray: (v) => ArrayBuffer.isView(v) && !(v instanceof DataView), isUint8Array: (v) => v instanceof Uint8Array,
  isArrayBuffer: (v) => v instanceof ArrayBuffer, isAnyArrayBuffer: (v) => v instanceof ArrayBuffer,
  isAsyncFunction: (v) => typeof v === 'function' && v.constructor && v.constructor.name === 'AsyncFunction',
  isGeneratorFunction: (v) => typeof v === 'function' && v.constructor && /Generator/.test(v.constructor.name),
  isProxy: () => false, isBoxedPrimitive: (v) => v instanceof Number || v instanceof String || v instanceof Boolean,
};
const util = {
  format, inspect, promisify, types, TextEncoder, TextDecoder,
  formatWithOptions: (o, ...a) => format(...a),
  inherits(ctor, sup) { Object.setPrototypeOf(ctor.prototype, sup.prototype); Object.setPrototypeOf(ctor, sup); ctor.super_ = sup; },
  deprecate: (fn) => fn,
  debuglog: () => Object.assign(() => {}, { enabled: false }),
  debug: () => Object.assign(() => {}, { enabled: false }),
  isDeepStrictEqual: (a, b) => isDeepEqual(a, b, true),
  callbackify: (fn) => (...a) => { const cb = a.pop(); fn(...a).then((v) => cb(null, v), (e) => cb(e)); },
  stripVTControlCharacters: (s) => String(s).replace(/\u001b\[[0-9;]*[A-Za-z]/g, ''),
  styleText: (_f, s) => s,
  toUSVString: (s) => String(s),
  isArray: Array.isArray,
  isError: (e) => e instanceof Error,
  parseArgs: (cfg) => parseArgs(cfg || {}),
};
function parseArgs(cfg) {
  const args = cfg.args || process.argv.slice(2), opts = cfg.options || {}, values = {}, positionals = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') { positionals.push(...args.slice(i + 1)); break; }
    let name = null, val;
    if (a.startsWith('--')) { const eq = a.indexOf('='); name = eq > 0 ? a.slice(2, eq) : a.slice(2); if (eq > 0) val = a.slice(eq + 1); }
    else if (a.startsWith('-') && a.length > 1) { const s = a.slice(1, 2); name = Object.keys(opts).find((k) => opts[k].short === s) || s; if (a.length > 2) val = a.slice(2); }
    if (name === null) { positionals.push(a); continue; }
    const o = opts[name] || { type: 'boolean' };
    if (o.type === 'string') { if (val === undefined) val = args[++i]; } else val = true;
    if (o.multiple) (values[name] = values[name] || []).push(val); else values[name] = val;
  }
  for (const [k, o] of Object.entries(opts)) if (values[k] === undefined && o.default !== undefined) values[k] = o.default;
  return { values, positionals };
}

// ── assert ─────────────────────────────────────────────────────────────────
class AssertionError extends Error {
  constructor(o) { super(o.message); this.name = 'AssertionError'; this.code = 'ERR_ASSERTION'; this.actual = o.actual; this.expected = o.expected; this.operator = o.operator; this.generatedMessage = !o.userMessage; }
}
function fail(actual, expected, message, operator, defaultMsg) {
  if (message instanceof Error) throw message;
  throw new AssertionError({ message: message || defaultMsg, actual, expected, operator, userMessage: !!message });
}
function assert(v, m) { if (!v) fail(v, true, m, '==', 'The expression evaluated to a falsy value:\n\n  assert(' + inspect(v) + ')\n'); }
Object.assign(assert, {
  ok: (v, m) => { if (!v) fail(v, true, m, '==', 'The expression evaluated to a falsy value:\n\n  assert.ok(' + inspect(v) + ')\n'); },
  equal: (a, b, m) => { if (!(a == b || (a !== a && b !== b))) fail(a, b, m, '==', inspect(a) + ' == ' + inspect(b)); },
  notEqual: (a, b, m) => { if (a == b) fail(a, b, m, '!=', inspect(a) + ' != ' + inspect(b)); },
  strictEqual: (a, b, m) => { if (!Object.is(a, b)) fail(a, b, m, 'strictEqual', 'Expected values to be strictly equal:\n\n' + inspect(a) + ' !== ' + inspect(b) + '\n'); },
  notStrictEqual: (a, b, m) => { if (Object.is(a, b)) fail(a, b, m, 'notStrictEqual', 'Expected "actual" to be strictly unequal to: ' + inspect(b)); },
  deepEqual: (a, b, m) => { if (!isDeepEqual(a, b, false)) fail(a, b, m, 'deepEqual', 'Expected values to be loosely deep-equal:\n\n' + inspect(a) + '\n\nshould loosely deep-equal\n\n' + inspect(b)); },
  deepStrictEqual: (a, b, m) => { if (!isDeepEqual(a, b, true)) fail(a, b, m, 'deepStrictEqual', 'Expected values to be strictly deep-equal:\n+ actual - expected\n\n+ ' + inspect(a) + '\n- ' + inspect(b)); },
  notDeepStrictEqual: (a, b, m) => { if (isDeepEqual(a, b, true)) fail(a, b, m, 'notDeepStrictEqual', 'Expected "actual" not to be strictly deep-equal to: ' + inspect(b)); },
  notDeepEqual: (a, b, m) => { if (isDeepEqual(a, b, false)) fail(a, b, m, 'notDeepEqual', 'Expected "actual" not to be loosely deep-equal to: ' + inspect(b)); },
  fail: (m) => fail(undefined, undefined, m || 'Failed', 'fail', 'Failed'),
  match: (s, re, m) => { if (!re.test(s)) fail(s, re, m, 'match', 'The input did not match the regular expression ' + String(re) + '. Input:\n\n' + inspect(s) + '\n'); },
  doesNotMatch: (s, re, m) => { if (re.test(s)) fail(s, re, m, 'doesNotMatch', 'The input was expected to not match the regular expression ' + String(re)); },
  throws: (fn, expected, m) => {
    try { fn(); } catch (e) { checkThrown(e, expected, m); return; }
    fail(undefined, expected, typeof expected === 'string' ? expected : m, 'throws', 'Missing expected exception.');
  },
  doesNotThrow: (fn, m) => { try { fn(); } catch (e) { fail(e, undefined, m, 'doesNotThrow', 'Got unwanted exception.\nActual message: "' + (e && e.message) + '"'); } },
  rejects: async (p, expected, m) => {
    try { await (typeof p === 'function' ? p() : p); } catch (e) { checkThrown(e, expected, m); return; }
    fail(undefined, expected, m, 'rejects', 'Missing expected rejection.');
  },
  doesNotReject: async (p, m) => { try { await (typeof p === 'function' ? p() : p); } catch (e) { fail(e, undefined, m, 'doesNotReject', 'Got unwanted rejection.\nActual message: "' + (e && e.message) + '"'); } },
  ifError: (v) => { if (v !== null && v !== undefined) throw v; },
  AssertionError,
});
function checkThrown(e, expected, m) {
  if (expected === undefined || typeof expected === 'string') return;
  if (expected instanceof RegExp) { if (!expected.test(String(e && e.message !== undefined ? e : e))) fail(e, expected, m, 'throws', 'The error message does not match ' + String(expected)); return; }
  if (typeof expected === 'function') {
    if (expected.prototype !== undefined && e instanceof expected) return;
    if (Error.isPrototypeOf(expected) || expected === Error) fail(e, expected, m, 'throws', 'The error is expected to be an instance of "' + expected.name + '". Received "' + (e && e.constructor && e.constructor.name) + '"');
    if (expected.call({}, e) === true) return;
    fail(e, expected, m, 'throws', 'The validation function is expected to return "true". Received false');
  }
  if (typeof expected === 'object') {
    for (const k of Object.keys(expected)) {
      const want = expected[k], got = e[k];
      if (want instanceof RegExp && typeof got === 'string' ? !want.test(got) : !isDeepEqual(got, want, true)) fail(e, expected, m, 'throws', 'Expected values to be strictly deep-equal: ' + k + ': ' + inspect(got) + ' !== ' + inspect(want));
    }
  }
}
assert.strict = assert;

// ── readline, string_decoder, os, misc ────────────────────────────────────
function createInterface(o) {
  const input = o && o.input ? o.input : o;
  const rl = new EventEmitter();
  const lines = [];
  let closed = false, buf = '', waiting = [];
  const push = (l) => { if (waiting.length) waiting.shift()({ value: l, done: false }); else lines.push(l); rl.emit('line', l); };
  const finish = () => { if (buf) { push(buf); buf = ''; } closed = true; for (const w of waiting.splice(0)) w({ value: undefined, done: true }); rl.emit('close'); };
  if (input && typeof input.on === 'function') {
    input.on('data', (d) => { buf += typeof d === 'string' ? d : utf8Decode(d); const parts = buf.split(/\r?\n/); buf = parts.pop(); for (const l of parts) push(l); });
    input.on('end', finish);
  }
  rl.close = () => { if (!closed) finish(); };
  rl.question = (q, opts, cb) => { if (typeof opts === 'function') cb = opts; host.write(1, q); rl.once('line', cb); };
  rl.setPrompt = () => {}; rl.prompt = () => {}; rl.write = () => {}; rl.pause = () => rl; rl.resume = () => rl;
  rl[Symbol.asyncIterator] = () => ({ next: () => (lines.length ? Promise.resolve({ value: lines.shift(), done: false }) : closed ? Promise.resolve({ value: undefined, done: true }) : new Promise((r) => waiting.push(r))), return: () => Promise.resolve({ done: true }), [Symbol.asyncIterator]() { return this; } });
  return rl;
}
class StringDecoder {
  constructor(enc) { this.encoding = normEnc(enc || 'utf8'); this._rest = new Uint8Array(0); }
  write(b) {
    if (typeof b === 'string') return b;
    let u = toU8(b);
    if (this.encoding !== 'utf8') return decodeBytes(u, this.encoding);
    if (this._rest.length) { const j = new Uint8Array(this._rest.length + u.length); j.set(this._rest); j.set(u, this._rest.length); u = j; }
    let end = u.length, i = u.length - 1, back = 0;
    while (i >= 0 && back < 4 && (u[i] & 0xc0) === 0x80) { i--; back++; }
    if (i >= 0) { const lead = u[i], need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1; if (need > back + 1) end = i; }
    this._rest = u.slice(end);
    return utf8Decode(u.subarray(0, end));
  }
  end(b) { const s = b ? this.write(b) : ''; const r = this._rest.length ? utf8Decode(this._rest) : ''; this._rest = new Uint8Array(0); return s + r; }
}
const os = {
  EOL: '\n', devNull: '/dev/null', constants: { signals: {}, errno: {} },
  platform: () => 'linux', type: () => 'Linux', arch: () => 'x64', release: () => '6.0.0-offline', version: () => '#1 SMP', machine: () => 'x86_64',
  hostname: () => 'localhost', homedir: () => process.env.HOME || '/home/user', tmpdir: () => '/tmp', endianness: () => 'LE',
  cpus: () => [{ model: 'QuickJS', speed: 0, times: { user: 0, nice: 0, sys: 0, idle: 0, irq: 0 } }], availableParallelism: () => 1,
  totalmem: () => 2 ** 30, freemem: () => 2 ** 29, uptime: () => host.now() / 1000, loadavg: () => [0, 0, 0],
  networkInterfaces: () => ({}), userInfo: () => ({ username: 'user', uid: 1000, gid: 1000, shell: '/bin/bash', homedir: process.env.HOME || '/home/user' }),
};
const timersPromises = {
  setTimeout: (ms, v) => new Promise((r) => setTimeout(() => r(v), ms)),
  setImmediate: (v) => new Promise((r) => setImmediate(() => r(v))),
  scheduler: { wait: (ms) => new Promise((r) => setTimeout(r, ms)), yield: () => new Promise((r) => setImmediate(r)) },
};
const cryptoModule = {
  webcrypto, getRandomValues: webcrypto.getRandomValues, randomUUID: webcrypto.randomUUID,
  randomBytes: (n, cb) => { const b = Buffer._wrap(randomBytesU8(n)); if (cb) { setTimeout(() => cb(null, b), 0); return undefined; } return b; },
  randomInt: (a, b) => { if (b === undefined) { b = a; a = 0; } const r = randomBytesU8(4); return a + (((r[0] << 24) | (r[1] << 16) | (r[2] << 8) | r[3]) >>> 0) % (b - a); },
  createHash: (alg) => { throw new Error('crypto.createHash(' + quote(String(alg)) + ') is not available in the offline engine'); },
  createHmac: () => { throw new Error('crypto.createHmac is not available in the offline engine'); },
};

// ── CommonJS modules ───────────────────────────────────────────────────────
const moduleCache = Object.create(null);
let mainModule;
class Module {
  constructor(filename, parent) {
    this.id = filename; this.filename = filename; this.path = path.dirname(filename); this.exports = {};
    this.parent = parent || null; this.loaded = false; this.children = []; this.paths = [];
    this.require = makeRequire(this);
    if (parent) parent.children.push(this);
  }
}
function resolveRequest(id, fromDir, mode, parent) {
  const r = JSON.parse(host.resolve(String(id), fromDir, mode));
  if (r.err) {
    const stack = parent && parent.filename ? '\nRequire stack:\n- ' + parent.filename : '';
    const e = new Error(r.err.message + stack);
    e.code = r.err.code;
    if (parent && parent.filename) e.requireStack = [parent.filename];
    throw e;
  }
  return r;
}
function makeRequire(mod) {
  const require = function require(id) {
    if (typeof id !== 'string') { const e = new TypeError('The "id" argument must be of type string. Received ' + inspect(id)); e.code = 'ERR_INVALID_ARG_TYPE'; throw e; }
    const r = resolveRequest(id, mod.path, 'require', mod);
    if (r.builtin) return builtin(r.builtin);
    return loadFile(r.path, r.format, mod);
  };
  require.resolve = (id) => { const r = resolveRequest(id, mod.path, 'require', mod); return r.builtin ? (String(id).startsWith('node:') ? 'node:' + r.builtin : r.builtin) : r.path; };
  require.resolve.paths = (id) => (/^[./]/.test(id) ? null : mod.path.split('/').map((_, i, a) => a.slice(0, a.length - i).join('/') + '/node_modules').filter((p) => p !== '/node_modules').concat(['/node_modules']));
  require.cache = moduleCache;
  require.extensions = { '.js': null, '.json': null, '.cjs': null };
  Object.defineProperty(require, 'main', { get: () => mainModule, enumerable: true });
  return require;
}
function loadFile(filename, format, parent) {
  const cached = moduleCache[filename];
  if (cached) return cached.exports;
  if (format === 'esm') {
    const e = new Error('require() of ES Module ' + filename + ' is not supported in the offline engine; use import() instead');
    e.code = 'ERR_REQUIRE_ESM';
    throw e;
  }
  const m = new Module(filename, parent);
  moduleCache[filename] = m;
  try {
    const source = utf8Decode(readBytes(filename));
    if (format === 'json') {
      try { m.exports = JSON.parse(source); } catch (e) { e.message = filename + ': ' + e.message; throw e; }
    } else {
      const body = source.startsWith('#!') ? '//' + source.slice(2) : source;
      const fn = host.compile('(function (exports, require, module, __filename, __dirname) {' + body + '\n})', filename);
      fn.call(m.exports, m.exports, m.require, m, filename, m.path);
    }
  } catch (e) {
    delete moduleCache[filename];
    throw e;
  }
  m.loaded = true;
  return m.exports;
}
internal.runMain = (filename) => {
  const m = new Module(filename, null);
  m.id = '.';
  mainModule = m;
  process.mainModule = m;
  moduleCache[filename] = m;
  const source = utf8Decode(readBytes(filename));
  const body = source.startsWith('#!') ? '//' + source.slice(2) : source;
  const fn = host.compile('(function (exports, require, module, __filename, __dirname) {' + body + '\n})', filename);
  fn.call(m.exports, m.exports, m.require, m, filename, m.path);
  m.loaded = true;
};
internal.runEval = (code, print) => {
  const m = new Module(path.join(cwd, '[eval]'), null);
  m.id = '[eval]'; m.filename = '[eval]';
  Object.assign(G, { require: m.require, module: m, exports: m.exports, __filename: '[eval]', __dirname: '.' });
  const v = host.evalGlobal(code, '[eval]');
  if (print) console.log(v);
};
internal.requireAbs = (filename, format) => loadFile(filename, format, mainModule);
internal.resolveUrl = (s, dir) => { const r = resolveRequest(s, dir, 'import', null); return r.builtin ? 'node:' + r.builtin : pathToFileURL(r.path).href; };
internal.formatError = (e) => (e instanceof Error ? formatError(e) : 'Uncaught ' + inspect(e));
internal.exportNames = (name) => Object.keys(builtin(name)).filter((k) => IDENT.test(k) && k !== 'default').join(',');

// ── built-ins ──────────────────────────────────────────────────────────────
const moduleModule = {
  createRequire: (f) => { const file = typeof f === 'string' && f.startsWith('file:') ? fileURLToPath(f) : f instanceof URL ? fileURLToPath(f) : String(f); return new Module(file.endsWith('/') ? file + '[require]' : file, null).require; },
  builtinModules: config.builtins.slice(),
  isBuiltin: (n) => config.builtins.includes(String(n).replace(/^node:/, '')),
  Module, _cache: moduleCache, _extensions: {},
};
const factories = {
  fs: () => fs, 'fs/promises': () => fsPromises, path: () => path, 'path/posix': () => path,
  os: () => os, util: () => util, 'util/types': () => types, events: () => EventEmitter,
  child_process: () => child_process, assert: () => assert, 'assert/strict': () => assert,
  buffer: () => ({ Buffer, constants: { MAX_LENGTH: 2 ** 31 - 1, MAX_STRING_LENGTH: 2 ** 29 }, kMaxLength: 2 ** 31 - 1, atob: G.atob, btoa: G.btoa }),
  timers: () => ({ setTimeout, setInterval, setImmediate, clearTimeout, clearInterval, clearImmediate, promises: timersPromises }),
  'timers/promises': () => timersPromises,
  url: () => ({ URL, URLSearchParams, fileURLToPath, pathToFileURL, parse: (u) => { const x = new URL(u); return { protocol: x.protocol, host: x.host, hostname: x.hostname, port: x.port || null, pathname: x.pathname, search: x.search || null, hash: x.hash || null, href: x.href, path: x.pathname + x.search, query: x.search.slice(1) || null }; }, format: (u) => (typeof u === 'string' ? u : u.href || String(u)) }),
  module: () => moduleModule, process: () => process,
  readline: () => ({ createInterface, emitKeypressEvents() {}, clearLine() {}, cursorTo() {}, moveCursor() {} }),
  'readline/promises': () => ({ createInterface: (o) => { const rl = createInterface(o); const q = rl.question; rl.question = (s) => new Promise((r) => q(s, r)); return rl; } }),
  string_decoder: () => ({ StringDecoder }),
  crypto: () => cryptoModule,
  tty: () => ({ isatty: () => false, ReadStream: EventEmitter, WriteStream: EventEmitter }),
  perf_hooks: () => ({ performance }),
  console: () => console,
};
const builtinCache = Object.create(null);
function builtin(name) {
  if (!(name in builtinCache)) {
    const f = factories[name];
    if (!f) throw new Error('No such built-in module: ' + name);
    builtinCache[name] = f();
  }
  return builtinCache[name];
}
internal.builtin = builtin;
`;
