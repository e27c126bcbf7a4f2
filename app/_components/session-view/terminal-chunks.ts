import type { StoredEvent } from '~/lib/events';

/**
 * The session's terminal: every bash call in log order, whichever hand ran it (named in the
 * prompt), with its output once stored. A call's hand is the one its result names; a first call
 * is made before any hand exists, and a call re-run after a crash may land on another.
 */
export function terminalChunks(events: readonly StoredEvent[]): string[] {
  const results = new Map<string, { text: string; hand: string | undefined; isError: boolean }>();
  for (const e of events) {
    if (e.type === 'agent.tool_result' || e.type === 'user.tool_result') {
      const text = (e.content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('');
      results.set(e.tool_use_id, { text, hand: 'hand' in e ? e.hand : undefined, isError: e.is_error === true });
    }
  }
  const chunks: string[] = [];
  for (const e of events) {
    if (e.type !== 'agent.tool_use' || e.name !== 'bash') continue;
    const result = results.get(e.id);
    const hand = result?.hand ?? e.hand;
    chunks.push(`\x1b[2m${hand ?? '…'}\x1b[0m \x1b[32m$\x1b[0m ${String(e.input.command)}\n`);
    if (result) chunks.push(result.text.endsWith('\n') ? result.text : `${result.text}\n`);
  }
  return chunks;
}
