import { describe, expect, it } from 'vitest';
import type { NewEvent } from '~/lib/events';
import { logWebhooks } from '~/lib/log-webhooks';
import { EVENT_SAMPLES } from '~/lib/testing/event-samples';
import { WEBHOOK_EVENTS_SENT } from '~/lib/webhook-events';

describe('the webhook events a log event stands for', () => {
  it('are all listed as sent, and a budget stop is both an idle and budget_reached', () => {
    const budget: NewEvent = { type: 'session.status_idle', stop_reason: { type: 'budget_reached' }, stop_details: null };
    const produced = [...Object.values(EVENT_SAMPLES), budget].flatMap((e) => logWebhooks(e).map((w) => w.type));
    expect(new Set(produced)).toEqual(new Set(WEBHOOK_EVENTS_SENT.filter((t) => t.startsWith('session.') && !['session.created', 'session.archived', 'session.deleted'].includes(t))));
    expect(logWebhooks(budget).map((w) => w.type)).toEqual(['session.status_idled', 'session.budget_reached']);
  });

  it("names a thread's id on its thread events only", () => {
    expect(logWebhooks(EVENT_SAMPLES['session.thread_status_idle'])).toEqual([{ type: 'session.thread_idled', session_thread_id: EVENT_SAMPLES['session.thread_status_idle'].session_thread_id }]);
    expect(logWebhooks(EVENT_SAMPLES['session.thread_status_running'])).toEqual([]);
    expect(logWebhooks(EVENT_SAMPLES['session.status_running'])).toEqual([{ type: 'session.status_run_started' }]);
  });
});
