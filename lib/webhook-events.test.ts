import type { BetaWebhookEventData } from '@anthropic-ai/sdk/resources/beta/webhooks';
import { describe, expect, it } from 'vitest';
import { WEBHOOK_EVENTS_NOT_SENT, WEBHOOK_EVENTS_SENT, WEBHOOK_EVENT_TYPES, type WebhookEventType, WebhookEndpointCreate } from '~/lib/webhook-events';

/** True only when both are the same set of names (a type check: a name the SDK adds fails tsc). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

describe("the SDK's webhook event names", () => {
  it('are all listed, each either sent or said why not, never both', () => {
    const same: Same<BetaWebhookEventData['type'], WebhookEventType> = true;
    expect(same).toBe(true);
    const sent = new Set<string>(WEBHOOK_EVENTS_SENT);
    const notSent = Object.keys(WEBHOOK_EVENTS_NOT_SENT);
    expect(sent.size).toBe(WEBHOOK_EVENTS_SENT.length);
    expect(notSent.filter((t) => sent.has(t))).toEqual([]);
    expect([...sent, ...notSent].sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
  });
});

describe('a webhook endpoint to create', () => {
  it('refuses what is no URL with a message, never by throwing (the fuzz suite met an empty one)', () => {
    for (const url of ['', 'not a url', '://x']) {
      const r = WebhookEndpointCreate.safeParse({ url });
      expect(r.success, url).toBe(false);
      expect(r.error?.issues.map((i) => i.message).join(' '), url).toContain('must be an http(s) URL');
    }
  });

  it('refuses credentials in the URL and takes a plain one', () => {
    expect(WebhookEndpointCreate.safeParse({ url: 'https://u:p@hooks.example.com/in' }).error?.issues[0]?.message).toBe('must not carry credentials');
    expect(WebhookEndpointCreate.safeParse({ url: 'https://hooks.example.com/in', event_types: ['deployment.created'] }).success).toBe(true);
  });
});
