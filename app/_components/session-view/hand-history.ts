import type { HandRecord } from '~/lib/hand-log';

export interface HandGroups {
  /** Hands still usable (ready, suspended included), in provisioning order. */
  live: HandRecord[];
  /** Lost and released hands, newest first: the history line folds them away. */
  history: HandRecord[];
  /** The folded line's text, e.g. "2 earlier hands (1 lost, 1 released)"; '' when there is no history. */
  summary: string;
}

/**
 * Splits a session's hands into the live ones (always listed) and the ended ones (one
 * collapsed line), so a long session's lost hands do not push the file tree out of view.
 */
export function groupHands(records: readonly HandRecord[]): HandGroups {
  const live = records.filter((h) => h.status === 'ready');
  const history = records.filter((h) => h.status !== 'ready').reverse();
  const lost = history.filter((h) => h.status === 'lost').length;
  const released = history.length - lost;
  const parts = [lost > 0 ? `${lost} lost` : '', released > 0 ? `${released} released` : ''].filter(Boolean);
  const summary = history.length === 0 ? '' : `${history.length} earlier hand${history.length === 1 ? '' : 's'} (${parts.join(', ')})`;
  return { live, history, summary };
}
