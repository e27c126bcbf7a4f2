import http from 'node:http';
import type { PlacedSecret } from '~/server/hands/sandbox/secret-injection';

/** One spelling of a value the proxy can see in an answer, and the placeholder's same spelling. */
export interface ScrubPair {
  from: Buffer;
  to: Buffer;
}

/** Shorter spellings are left alone: they would match ordinary text and mangle every answer. */
const MIN_SCRUB_LENGTH = 4;

const b64 = (s: string) => Buffer.from(s).toString('base64');
const b64url = (s: string) => Buffer.from(s).toString('base64url');

/**
 * The base64 characters that depend on `s` alone when it sits `shift` bytes into a longer base64'd
 * text (its other characters mix in neighbouring bytes): what an echo of a larger encoded blob holds.
 */
function base64Core(s: string, shift: 0 | 1 | 2, url: boolean): string {
  const bytes = Buffer.concat([Buffer.alloc(shift), Buffer.from(s)]);
  const encoded = bytes.toString(url ? 'base64url' : 'base64');
  const startBits = 8 * shift;
  const endBits = 8 * bytes.length;
  const first = Math.ceil(startBits / 6);
  const last = Math.floor(endBits / 6); // exclusive: a char past the data holds padding bits
  return encoded.slice(first, last);
}

/**
 * Every spelling of each value the scrub looks for, each mapped to the placeholder spelled the
 * same way: plain, URL-encoded (upper- and lower-case escapes, `+` for a space), JSON-escaped,
 * base64 and base64url (padded or not, of the value and of `Bearer <value>`), and the value's
 * base64 inside a longer base64 text at each of the three byte offsets.
 */
export function scrubPairs(secrets: readonly PlacedSecret[]): ScrubPair[] {
  const pairs = new Map<string, string>();
  const add = (from: string, to: string) => {
    if (from.length >= MIN_SCRUB_LENGTH && from !== to && !pairs.has(from)) pairs.set(from, to);
  };
  for (const { value: v, placeholder: p } of secrets) {
    add(v, p);
    const uri = encodeURIComponent(v);
    add(uri, encodeURIComponent(p));
    add(uri.replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()), encodeURIComponent(p));
    add(uri.replaceAll('%20', '+'), encodeURIComponent(p));
    add(JSON.stringify(v).slice(1, -1), p);
    add(JSON.stringify(v).slice(1, -1).replaceAll('/', '\\/'), p); // as PHP's json_encode writes a slash
    for (const s of [v, `Bearer ${v}`]) {
      const q = s === v ? p : `Bearer ${p}`;
      add(b64(s), b64(q));
      add(b64(s).replace(/=+$/, ''), b64(q).replace(/=+$/, ''));
      add(b64url(s), b64url(q));
      add(`${b64url(s)}${'='.repeat((4 - (b64url(s).length % 4)) % 4)}`, b64(q).replace(/\+/g, '-').replace(/\//g, '_'));
    }
    for (const shift of [0, 1, 2] as const) {
      for (const url of [false, true]) add(base64Core(v, shift, url), base64Core(p, shift, url));
    }
  }
  // Longest first: at one position the fullest spelling wins (`Bearer …`'s base64 before a core).
  return [...pairs.entries()].sort((a, b) => b[0].length - a[0].length).map(([from, to]) => ({ from: Buffer.from(from), to: Buffer.from(to) }));
}

/**
 * Replaces every pair in `work` (earliest match first, longest at a position). With `holdBack`
 * (more chunks to come), the last bytes that could begin a spelling, and a match close enough to
 * the end that a longer spelling from the same place could still complete, are returned unscanned.
 */
function replaceAll(work: Buffer, pairs: readonly ScrubPair[], holdBack: number): { out: Buffer; tail: Buffer } {
  const parts: Buffer[] = [];
  let pos = 0;
  let stop = Math.max(0, work.length - holdBack);
  for (;;) {
    let at = -1;
    let hit: ScrubPair | undefined;
    for (const p of pairs) {
      const i = work.indexOf(p.from, pos);
      if (i !== -1 && (at === -1 || i < at)) {
        at = i;
        hit = p;
      }
    }
    if (!hit) break;
    if (holdBack > 0 && at + holdBack + 1 > work.length) {
      stop = at;
      break;
    }
    parts.push(work.subarray(pos, at), hit.to);
    pos = at + hit.from.length;
  }
  const tailStart = Math.max(pos, stop);
  parts.push(work.subarray(pos, tailStart));
  return { out: Buffer.concat(parts), tail: Buffer.from(work.subarray(tailStart)) };
}

/** A scrub over one stream of chunks: a spelling split across chunks is still found. */
export class StreamScrub {
  #carry: Buffer = Buffer.alloc(0);
  readonly #holdBack: number;

  constructor(private readonly pairs: readonly ScrubPair[]) {
    this.#holdBack = Math.max(0, ...pairs.map((p) => p.from.length - 1));
  }

  push(chunk: Buffer): Buffer {
    const { out, tail } = replaceAll(this.#carry.length ? Buffer.concat([this.#carry, chunk]) : chunk, this.pairs, this.#holdBack);
    this.#carry = tail;
    return out;
  }

  finish(chunk?: Buffer): Buffer {
    const out = this.push(chunk ?? Buffer.alloc(0));
    const rest = replaceAll(this.#carry, this.pairs, 0).out;
    this.#carry = Buffer.alloc(0);
    return Buffer.concat([out, rest]);
  }
}

export function scrubText(text: string, pairs: readonly ScrubPair[]): string {
  return replaceAll(Buffer.from(text, 'latin1'), pairs, 0).out.toString('latin1');
}

type HeaderValue = string | number | readonly string[] | undefined;

function scrubHeaderValue(v: HeaderValue, pairs: readonly ScrubPair[]): HeaderValue {
  if (typeof v === 'string') return scrubText(v, pairs);
  if (Array.isArray(v)) return (v as readonly string[]).map((x) => scrubText(String(x), pairs));
  return v;
}

/** Answers that carry no body: their Content-Length is left as it is. */
const BODYLESS_STATUS = (status: number) => status < 200 || status === 204 || status === 304;

let installed: readonly ScrubPair[] | null = null;

/**
 * Puts each value's placeholder back in every answer this process serves, headers and body:
 * a host that echoes a request (`/headers`, an error quoting it) must not hand the value to the
 * hand (and so to its tool results, the log, share links, the API and the model).
 *
 * sandbox-runtime's proxy has no hook on what it sends back (its `onResponse` only observes
 * headers), so this wraps what it uses: every answer it writes to the hand — relayed from the
 * TLS-terminated upstream, from a plain-HTTP upstream, or its own errors — is an
 * `http.ServerResponse` of this process, whose `writeHead`, `write` and `end` are wrapped here.
 * The launcher is one process per hand and serves nothing else. A body whose length may change
 * loses its Content-Length and goes out chunked. A compressed body cannot be seen into: the
 * injection rules ask such hosts for an uncompressed answer (no Accept-Encoding).
 */
export function scrubProxyResponses(pairs: readonly ScrubPair[]): void {
  if (pairs.length === 0) return;
  if (installed) throw new Error('response scrub is already installed');
  installed = pairs;
  const proto = http.ServerResponse.prototype;
  // The originals, only ever called with a response as `this` (below).
  type Original<R> = (this: http.ServerResponse, ...a: unknown[]) => R;
  const writeHead = Reflect.get(proto, 'writeHead') as Original<http.ServerResponse>;
  const write = Reflect.get(proto, 'write') as Original<boolean>;
  const end = Reflect.get(proto, 'end') as Original<http.ServerResponse>;
  const streams = new WeakMap<http.ServerResponse, StreamScrub>();
  const streamOf = (res: http.ServerResponse) => {
    let s = streams.get(res);
    if (!s) streams.set(res, (s = new StreamScrub(pairs)));
    return s;
  };
  const toBuffer = (chunk: unknown, encoding: unknown): Buffer =>
    typeof chunk === 'string' ? Buffer.from(chunk, (typeof encoding === 'string' ? encoding : 'utf8') as BufferEncoding) : Buffer.from(chunk as Uint8Array);

  proto.writeHead = function (this: http.ServerResponse, status: number, ...rest: unknown[]) {
    const hasBody = !BODYLESS_STATUS(status) && this.req?.method !== 'HEAD';
    for (const name of this.getHeaderNames()) {
      if (hasBody && name === 'content-length') this.removeHeader(name);
      else this.setHeader(name, scrubHeaderValue(this.getHeader(name), pairs) as string | string[]);
    }
    const args = rest.map((a) => {
      if (typeof a === 'string') return scrubText(a, pairs); // a status message
      if (Array.isArray(a)) {
        // Raw headers: [name, value, name, value, …] or [[name, value], …].
        if (a.every((x) => Array.isArray(x))) return (a as string[][]).filter(([n]) => !(hasBody && String(n).toLowerCase() === 'content-length')).map(([n, v]) => [n, scrubHeaderValue(v, pairs)]);
        const out: unknown[] = [];
        for (let i = 0; i + 1 < a.length; i += 2) {
          if (hasBody && String(a[i]).toLowerCase() === 'content-length') continue;
          out.push(a[i], scrubHeaderValue(a[i + 1] as HeaderValue, pairs));
        }
        return out;
      }
      if (a && typeof a === 'object') {
        const out: Record<string, HeaderValue> = {};
        for (const [n, v] of Object.entries(a as Record<string, HeaderValue>)) {
          if (hasBody && n.toLowerCase() === 'content-length') continue;
          out[n] = scrubHeaderValue(v, pairs);
        }
        return out;
      }
      return a;
    });
    return writeHead.call(this, status, ...args);
  } as typeof proto.writeHead;

  proto.write = function (this: http.ServerResponse, chunk: unknown, encoding?: unknown, cb?: unknown) {
    if (typeof encoding === 'function') [cb, encoding] = [encoding, undefined];
    const out = streamOf(this).push(toBuffer(chunk, encoding));
    return write.call(this, out, cb);
  } as typeof proto.write;

  proto.end = function (this: http.ServerResponse, chunk?: unknown, encoding?: unknown, cb?: unknown) {
    if (typeof chunk === 'function') [cb, chunk] = [chunk, undefined];
    else if (typeof encoding === 'function') [cb, encoding] = [encoding, undefined];
    const s = streams.get(this);
    if (!s && (chunk === undefined || chunk === null)) return end.call(this, cb);
    const out = (s ?? streamOf(this)).finish(chunk === undefined || chunk === null ? undefined : toBuffer(chunk, encoding));
    return end.call(this, out.length > 0 ? out : undefined, cb);
  } as typeof proto.end;
}
