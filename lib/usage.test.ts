import { describe, expect, it } from 'vitest';
import { estimateCost, foldUsage, priceFor } from '~/lib/usage';
import { Log } from '~/server/harness/testing/log-builder';

describe('session usage', () => {
  it('sums every model request: turns and compaction summaries', () => {
    const log = new Log();
    log.user('go');
    log.turn(() => log.say('one'));
    log.turn(() => log.say('two'));
    log.add({ type: 'agent.thread_context_compacted', summary: 's', from_seq: 1, to_seq: 7, model_usage: { input_tokens: 100, output_tokens: 50, cache_read_input_tokens: 1000, cache_creation_input_tokens: 0 } });
    // log-builder's turns use 10 in / 5 out each.
    expect(foldUsage(log.events)).toEqual({ input_tokens: 120, output_tokens: 60, cache_read_input_tokens: 1000, cache_creation_input_tokens: 0, requests: 3 });
  });

  it('estimates cost at list prices by family, cache reads at a tenth and writes at 1.25×, and none for an unknown model', () => {
    const u = { input_tokens: 1_000_000, output_tokens: 1_000_000, cache_read_input_tokens: 1_000_000, cache_creation_input_tokens: 1_000_000, requests: 1 };
    expect(priceFor('claude-sonnet-5-5')).toEqual({ input: 3, output: 15 });
    expect(estimateCost('claude-sonnet-5-5', u)).toBeCloseTo(3 + 15 + 0.3 + 3.75, 6);
    expect(estimateCost('claude-haiku-4-5', u)).toBeCloseTo(1 + 5 + 0.1 + 1.25, 6);
    expect(estimateCost('llama3.1:8b', u)).toBeNull();
  });
});
