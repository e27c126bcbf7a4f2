import type { LiveDelta } from '~/lib/events';
import { unreachable } from '~/lib/unreachable';

/**
 * Live deltas as NOTIFY payloads: the relay between instances (pg-notifier.ts) sends what these
 * make. Pure, so the limits are tested without a database.
 */

/** NOTIFY payloads must stay under 8000 bytes; a delta's text is cut into pieces that do. */
export const LIVE_PAYLOAD_MAX_BYTES = 7_500;
/** Characters per piece of an oversized delta: even fully \u-escaped, far under the limit. */
export const LIVE_PIECE_CHARS = 1_000;

/** Numbered: PostgreSQL folds identical payloads of one statement into one. */
export function livePayload(n: number, delta: LiveDelta): string {
  return JSON.stringify({ n, d: delta });
}

/** A delta whose payload would pass NOTIFY's limit, cut into pieces that, in order, say the same. */
export function livePieces(delta: LiveDelta): LiveDelta[] {
  if (Buffer.byteLength(JSON.stringify(delta)) <= LIVE_PAYLOAD_MAX_BYTES) return [delta];
  switch (delta.kind) {
    case 'text':
    case 'thinking':
      return chunks(delta.text).map((text) => ({ ...delta, text }));
    case 'tool_input':
      return chunks(delta.partial_json).map((partial_json) => ({ ...delta, partial_json }));
    case 'hand':
      return [{ ...delta, ...(delta.detail ? { detail: delta.detail.slice(0, LIVE_PIECE_CHARS) } : {}) }];
    default:
      return unreachable(delta);
  }
}

/** `a` then `b` as one delta, when they continue the same block and stay one piece; else null. */
export function mergeDeltas(a: LiveDelta, b: LiveDelta): LiveDelta | null {
  if (a.kind !== b.kind || a.kind === 'hand' || b.kind === 'hand') return null;
  if (a.session_id !== b.session_id || a.model_request_start_id !== b.model_request_start_id || a.index !== b.index) return null;
  if (a.kind === 'tool_input' && b.kind === 'tool_input') {
    const partial_json = a.partial_json + b.partial_json;
    return a.name === b.name && partial_json.length <= LIVE_PIECE_CHARS ? { ...a, partial_json } : null;
  }
  if ((a.kind === 'text' && b.kind === 'text') || (a.kind === 'thinking' && b.kind === 'thinking')) {
    const text = a.text + b.text;
    return text.length <= LIVE_PIECE_CHARS ? { ...a, text } : null;
  }
  return null;
}

function chunks(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += LIVE_PIECE_CHARS) out.push(text.slice(i, i + LIVE_PIECE_CHARS));
  return out;
}

const LIVE_KINDS = new Set<string>(['hand', 'text', 'thinking', 'tool_input']);

export function parseLivePayload(payload: string): LiveDelta | null {
  try {
    const d = (JSON.parse(payload) as { d?: unknown }).d as Partial<LiveDelta> | undefined;
    return d && typeof d.kind === 'string' && LIVE_KINDS.has(d.kind) && typeof d.session_id === 'string' ? (d as LiveDelta) : null;
  } catch {
    return null;
  }
}
