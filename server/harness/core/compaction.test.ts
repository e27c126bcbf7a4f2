import { describe, expect, it } from 'vitest';
import { shouldCompact, tokenScale } from '~/server/harness/core/compaction';
import { Log } from '~/server/harness/testing/log-builder';

describe('token calibration and the compaction trigger', () => {
  it('scales estimates by what the model server reported for the newest answered request, in quarter steps', () => {
    const log = new Log();
    log.user('go');
    expect(tokenScale(log.events)).toBe(1); // nothing answered yet
    const a = log.add({ type: 'span.model_request_start', model: 'm', estimated_input_tokens: 1000 });
    log.add({ type: 'span.model_request_end', model_request_start_id: a.id, is_error: false, model_usage: { input_tokens: 300, output_tokens: 5, cache_read_input_tokens: 900, cache_creation_input_tokens: 110 } });
    expect(tokenScale(log.events)).toBe(1.25); // 1,310 / 1,000 → 1.31 → 1.25
    const b = log.add({ type: 'span.model_request_start', model: 'm', estimated_input_tokens: 1000 });
    log.add({ type: 'span.model_request_end', model_request_start_id: b.id, is_error: true, model_usage: { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } });
    expect(tokenScale(log.events)).toBe(1.25); // a failed request reports nothing: ignored
    const c = log.add({ type: 'span.model_request_start', model: 'm', estimated_input_tokens: 100 });
    log.add({ type: 'span.model_request_end', model_request_start_id: c.id, is_error: false, model_usage: { input_tokens: 10_000, output_tokens: 5, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } });
    expect(tokenScale(log.events)).toBe(3); // clamped
  });

  it('compacts only over the trigger, and never twice with nothing new in between', () => {
    const log = new Log();
    log.user('go');
    expect(shouldCompact(900, log.events, 1000)).toBe(false);
    expect(shouldCompact(1100, log.events, 1000)).toBe(true);
    log.add({ type: 'agent.thread_context_compacted', summary: 's', from_seq: 1, to_seq: 1 });
    expect(shouldCompact(1100, log.events, 1000)).toBe(false);
    log.user('more');
    expect(shouldCompact(1100, log.events, 1000)).toBe(true);
  });
});
