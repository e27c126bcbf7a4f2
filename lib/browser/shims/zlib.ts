/**
 * Browser stand-in for Node's zlib: next.config.ts aliases Next's browserify-zlib polyfill to
 * this file. The polyfill lacks `constants`, which just-bash's gzip/gunzip/zcat read at run
 * time; this is the sync subset they use (plus callback forms), on pako. It replaces that
 * polyfill for all browser code, so it keeps Node's names and error shapes. No `client-only`:
 * it is aliased in wherever the polyfill was, the offline engine's worker included.
 */
import * as pako from 'pako';

export const constants = Object.freeze({
  Z_NO_FLUSH: 0, Z_PARTIAL_FLUSH: 1, Z_SYNC_FLUSH: 2, Z_FULL_FLUSH: 3, Z_FINISH: 4, Z_BLOCK: 5,
  Z_OK: 0, Z_STREAM_END: 1, Z_NEED_DICT: 2, Z_ERRNO: -1, Z_STREAM_ERROR: -2, Z_DATA_ERROR: -3,
  Z_MEM_ERROR: -4, Z_BUF_ERROR: -5, Z_VERSION_ERROR: -6,
  Z_NO_COMPRESSION: 0, Z_BEST_SPEED: 1, Z_BEST_COMPRESSION: 9, Z_DEFAULT_COMPRESSION: -1,
  Z_FILTERED: 1, Z_HUFFMAN_ONLY: 2, Z_RLE: 3, Z_FIXED: 4, Z_DEFAULT_STRATEGY: 0,
  Z_MIN_WINDOWBITS: 8, Z_MAX_WINDOWBITS: 15, Z_DEFAULT_WINDOWBITS: 15,
  Z_MIN_LEVEL: -1, Z_MAX_LEVEL: 9, Z_DEFAULT_LEVEL: -1, Z_MIN_MEMLEVEL: 1, Z_MAX_MEMLEVEL: 9, Z_DEFAULT_MEMLEVEL: 8,
});

export interface ZlibOptions {
  level?: number;
  maxOutputLength?: number;
}
type Input = string | ArrayBuffer | ArrayBufferView;
type Codec = (data: Uint8Array, options: { level?: pako.DeflateFunctionOptions['level'] }) => Uint8Array;

function bytes(input: Input): Uint8Array {
  if (typeof input === 'string') return new TextEncoder().encode(input);
  if (input instanceof ArrayBuffer) return new Uint8Array(input);
  return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
}

/** pako throws strings; Node throws Errors with a code. Also enforces maxOutputLength. */
function run(codec: Codec, input: Input, options: ZlibOptions = {}): Uint8Array {
  let out: Uint8Array;
  try {
    const level = options.level as pako.DeflateFunctionOptions['level'] | undefined;
    out = codec(bytes(input), level === undefined ? {} : { level });
  } catch (e) {
    const err = new Error(typeof e === 'string' ? e : e instanceof Error ? e.message : 'zlib error') as Error & { code: string; errno: number };
    err.code = 'Z_DATA_ERROR';
    err.errno = constants.Z_DATA_ERROR;
    throw err;
  }
  if (options.maxOutputLength !== undefined && out.length > options.maxOutputLength) {
    const err = new RangeError(`Cannot create a Buffer larger than ${options.maxOutputLength} bytes`) as RangeError & { code: string };
    err.code = 'ERR_BUFFER_TOO_LARGE';
    throw err;
  }
  return out;
}

const gzipCodec: Codec = (d, o) => pako.gzip(d, o);
const gunzipCodec: Codec = (d) => pako.ungzip(d);
const deflateCodec: Codec = (d, o) => pako.deflate(d, o);
const inflateCodec: Codec = (d) => pako.inflate(d);
const deflateRawCodec: Codec = (d, o) => pako.deflateRaw(d, o);
const inflateRawCodec: Codec = (d) => pako.inflateRaw(d);

export const gzipSync = (input: Input, options?: ZlibOptions) => run(gzipCodec, input, options);
export const gunzipSync = (input: Input, options?: ZlibOptions) => run(gunzipCodec, input, options);
export const deflateSync = (input: Input, options?: ZlibOptions) => run(deflateCodec, input, options);
export const inflateSync = (input: Input, options?: ZlibOptions) => run(inflateCodec, input, options);
export const deflateRawSync = (input: Input, options?: ZlibOptions) => run(deflateRawCodec, input, options);
export const inflateRawSync = (input: Input, options?: ZlibOptions) => run(inflateRawCodec, input, options);
/** Node's unzip takes gzip or zlib data. */
export const unzipSync = (input: Input, options?: ZlibOptions) => {
  const u = bytes(input);
  return run(u[0] === 0x1f && u[1] === 0x8b ? gunzipCodec : inflateCodec, u, options);
};

type Callback = (err: Error | null, out?: Uint8Array) => void;

function callbackStyle(sync: (input: Input, options?: ZlibOptions) => Uint8Array) {
  return (input: Input, options: ZlibOptions | Callback, callback?: Callback): void => {
    const cb = typeof options === 'function' ? options : callback;
    const opts = typeof options === 'function' ? undefined : options;
    setTimeout(() => {
      let out: Uint8Array;
      try {
        out = sync(input, opts);
      } catch (e) {
        cb?.(e as Error);
        return;
      }
      cb?.(null, out);
    }, 0);
  };
}

export const gzip = callbackStyle(gzipSync);
export const gunzip = callbackStyle(gunzipSync);
export const deflate = callbackStyle(deflateSync);
export const inflate = callbackStyle(inflateSync);
export const unzip = callbackStyle(unzipSync);

export default {
  constants, gzipSync, gunzipSync, deflateSync, inflateSync, deflateRawSync, inflateRawSync, unzipSync,
  gzip, gunzip, deflate, inflate, unzip,
};
