import { describe, expect, it } from 'vitest';
import type { NewEvent } from '~/lib/events';
import { interruptedTurnEvents } from '~/server/harness/core/turn-events';

const END: NewEvent = { type: 'span.model_request_end', model_request_start_id: 'sevt_start', is_error: true, model_usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }, model_stop_reason: 'interrupted' };

describe('interruptedTurnEvents: what of an interrupted answer is stored', () => {
  it.each([
    ['nothing streamed', '', [END], [undefined]],
    ['only whitespace streamed', ' \n\t', [END], [undefined]],
    ['half a sentence', 'The answer is', [{ type: 'agent.message', content: [{ type: 'text', text: 'The answer is' }], interrupted: true }, END], ['sevt_msg', undefined]],
    ['text with its trailing space kept as streamed', '1, 2, ', [{ type: 'agent.message', content: [{ type: 'text', text: '1, 2, ' }], interrupted: true }, END], ['sevt_msg', undefined]],
  ])('%s', (_, text, events, ids) => {
    expect(interruptedTurnEvents(text, 'sevt_msg', END)).toEqual({ events, ids });
  });
});
