import { describe, expect, it } from 'vitest';
import type { NewEvent, StoredEvent } from '~/lib/events';
import { type UrlSources, normalizeUrlSources, restrictsUrls, urlSourceOf } from '~/lib/url-sources';

/** A log from payloads: ids `sevt_<seq>`. */
function log(...payloads: NewEvent[]): StoredEvent[] {
  return payloads.map((p, i) => ({ ...p, id: `sevt_${i + 1}`, session_id: 'sesn_t', seq: i + 1, processed_at: new Date(0).toISOString() }));
}

const URL_A = 'https://docs.example.com/a';
const events = log(
  { type: 'user.message', content: [{ type: 'text', text: `read ${URL_A} please` }] },
  { type: 'agent.custom_tool_use', name: 'lookup', input: {}, model_tool_use_id: 'toolu_1' },
  { type: 'user.custom_tool_result', custom_tool_use_id: 'sevt_2', content: [{ type: 'text', text: 'see https://lookup.example/b' }] },
  { type: 'agent.tool_use', name: 'web_fetch', input: { url: URL_A }, model_tool_use_id: 'toolu_2' },
  { type: 'agent.tool_result', tool_use_id: 'sevt_4', content: [{ type: 'text', text: 'URL: …\n[next](https://docs.example.com/c)' }] },
  { type: 'agent.tool_use', name: 'bash', input: {}, model_tool_use_id: 'toolu_3' },
  { type: 'agent.tool_result', tool_use_id: 'sevt_6', content: [{ type: 'text', text: 'https://bash.example/d' }] },
);
const END = events.length + 1;
const sources = (p: Parameters<typeof normalizeUrlSources>[0]) => normalizeUrlSources(p) as UrlSources;

describe('url_sources', () => {
  it('restricts nothing when unset or every source is all', () => {
    expect(restrictsUrls(null)).toBe(false);
    expect(restrictsUrls(sources({ user_input: 'all', client_tool_results: { type: 'all' } }))).toBe(false);
    expect(restrictsUrls(sources({ user_input: 'none' }))).toBe(true);
  });

  it('with user_input none, refuses a URL found only in a user message and takes one from other sources', () => {
    const s = sources({ user_input: 'none' });
    expect(urlSourceOf(s, 'https://docs.example.com/a please', events, END)).toBeNull();
    expect(urlSourceOf(sources({ client_tool_results: 'none' }), URL_A, events, END)).toBe('user_input');
    expect(urlSourceOf(s, 'https://lookup.example/b', events, END)).toBe('client_tool_results');
    expect(urlSourceOf(s, 'https://docs.example.com/c', events, END)).toBe('server_tool_results');
  });

  it("never takes a URL from a hand tool's result, a URL the model made up, or one that came after the call", () => {
    const s = sources({ user_input: 'none' });
    expect(urlSourceOf(s, 'https://bash.example/d', events, END)).toBeNull();
    expect(urlSourceOf(s, 'https://made.up/', events, END)).toBeNull();
    expect(urlSourceOf(s, 'https://docs.example.com/c', events, 5)).toBeNull();
  });

  it('filters custom tools and server tools by name with only and except', () => {
    const only = (name: string) => ({ type: 'only' as const, tools: [{ type: 'tool_reference' as const, name }] });
    const except = (name: string) => ({ type: 'except' as const, tools: [{ type: 'tool_reference' as const, name }] });
    expect(urlSourceOf(sources({ user_input: 'none', client_tool_results: only('lookup') }), 'https://lookup.example/b', events, END)).toBe('client_tool_results');
    expect(urlSourceOf(sources({ user_input: 'none', client_tool_results: except('lookup') }), 'https://lookup.example/b', events, END)).toBeNull();
    expect(urlSourceOf(sources({ user_input: 'none', server_tool_results: only('web_search') }), 'https://docs.example.com/c', events, END)).toBeNull();
    expect(urlSourceOf(sources({ user_input: 'none', server_tool_results: except('web_search') }), 'https://docs.example.com/c', events, END)).toBe('server_tool_results');
  });
});
