import { describe, expect, it } from 'vitest';
import { WebhookEndpointCreate } from '~/lib/webhook-events';

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
