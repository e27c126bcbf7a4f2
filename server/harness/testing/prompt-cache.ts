import { createHash } from 'node:crypto';

/**
 * The Messages API's prompt cache, modelled for the fake so that cache figures are earned, not
 * scripted: a request is its blocks in order (tools, then system, then each message's content);
 * each `cache_control` breakpoint writes the prefix up to it; a later request reads the longest
 * prefix written before, found at a block boundary at most `LOOKBACK` blocks before one of its own
 * breakpoints (as the API looks back from each breakpoint). A prefix shorter than the model's
 * minimum is never cached. Tokens are estimated (4 characters each) from the blocks' JSON.
 */
export const LOOKBACK = 20;
export const MIN_CACHEABLE_TOKENS = 1024;

export interface CacheUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

type Block = { json: string; breakpoint: boolean };

/** The request as the cache sees it: blocks in order, markers removed (a marker is not content). */
export function requestBlocks(body: { tools?: unknown[]; system?: unknown; messages?: unknown[] } | null): Block[] {
  const blocks: Block[] = [];
  const push = (b: unknown, role?: string) => {
    const marked = typeof b === 'object' && b !== null && 'cache_control' in b && Boolean((b as { cache_control?: unknown }).cache_control);
    const { cache_control: _c, ...rest } = (typeof b === 'object' && b !== null ? b : { text: b }) as Record<string, unknown>;
    blocks.push({ json: JSON.stringify(role ? { role, ...rest } : rest), breakpoint: marked });
  };
  for (const t of body?.tools ?? []) push(t);
  const system = body?.system;
  if (typeof system === 'string') push({ type: 'text', text: system });
  else if (Array.isArray(system)) for (const b of system) push(b);
  for (const m of (body?.messages ?? []) as Array<{ role: string; content: unknown }>) {
    if (typeof m.content === 'string') push({ type: 'text', text: m.content }, m.role);
    else for (const b of (m.content as unknown[]) ?? []) push(b, m.role);
  }
  return blocks;
}

export class PromptCache {
  /** Hashes of prefixes written (up to a breakpoint) by earlier requests. */
  private readonly written = new Set<string>();

  /** What one request costs; it then writes its own breakpoints' prefixes. */
  account(body: Parameters<typeof requestBlocks>[0]): CacheUsage {
    const blocks = requestBlocks(body);
    const hashes: string[] = [];
    const tokens: number[] = [];
    const h = createHash('sha256');
    let total = 0;
    for (const b of blocks) {
      h.update(b.json).update('\u0000');
      hashes.push(h.copy().digest('hex'));
      total += Math.ceil(b.json.length / 4);
      tokens.push(total);
    }
    const breakpoints = blocks.flatMap((b, i) => (b.breakpoint ? [i] : []));
    // The longest prefix written before, within the look-back window of one of this request's breakpoints.
    let read = 0;
    for (const bp of breakpoints) {
      for (let i = bp; i >= Math.max(0, bp - LOOKBACK); i--) {
        if (this.written.has(hashes[i]!)) {
          read = Math.max(read, tokens[i]!);
          break;
        }
      }
    }
    // This request writes its breakpoints' prefixes (the ones long enough to cache).
    let writtenUpTo = 0;
    for (const bp of breakpoints) {
      if (tokens[bp]! < MIN_CACHEABLE_TOKENS) continue;
      this.written.add(hashes[bp]!);
      writtenUpTo = Math.max(writtenUpTo, tokens[bp]!);
    }
    const creation = Math.max(0, writtenUpTo - read);
    return { input_tokens: total - read - creation, cache_creation_input_tokens: creation, cache_read_input_tokens: read };
  }

  clear(): void {
    this.written.clear();
  }
}
