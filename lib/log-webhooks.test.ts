import { describe, expect, it } from 'vitest';
import type { NewEvent } from '~/lib/events';
import { logWebhooks } from '~/lib/log-webhooks';
import { EVENT_SAMPLES } from '~/lib/testing/event-samples';
import { WEBHOOK_EVENTS_SENT } from '~/lib/webhook-events';

describe('the webhook events a log event stands for', () => {
  it('are all listed as sent, and a budget stop is both an idle and budget_reached', () => {
    const budget: NewEvent = { type: 'session.status_idle', stop_reason: { type: 'budget_reached' }, stop_details: null };
    const endTurn: NewEvent = { type: 'session.status_idle', stop_reason: { type: 'end_turn' }, stop_details: null };
    const produced = [...Object.values(EVENT_SAMPLES), budget, endTurn].flatMap((e) => logWebhooks(e).map((w) => w.type));
    expect(new Set(produced)).toEqual(new Set(WEBHOOK_EVENTS_SENT.filter((t) => t.startsWith('session.') && !['session.created', 'session.archived', 'session.deleted'].includes(t))));
    expect(logWebhooks(budget).map((w) => w.type)).toEqual(['session.status_idled', 'session.idled', 'session.budget_reached']);
  });

  it('names the status a session is now in as well as its status event: running, idled, or requires_action when it waits on a caller', () => {
    expect(logWebhooks(EVENT_SAMPLES['session.status_running']).map((w) => w.type)).toEqual(['session.status_run_started', 'session.running']);
    expect(logWebhooks({ type: 'session.status_idle', stop_reason: { type: 'end_turn' }, stop_details: null }).map((w) => w.type)).toEqual(['session.status_idled', 'session.idled']);
    expect(logWebhooks({ type: 'session.status_idle', stop_reason: { type: 'requires_action', event_ids: ['sevt_1'] }, stop_details: null }).map((w) => w.type)).toEqual(['session.status_idled', 'session.requires_action']);
  });

  it("names a thread's id on its thread events only", () => {
    expect(logWebhooks(EVENT_SAMPLES['session.thread_status_idle'])).toEqual([{ type: 'session.thread_idled', session_thread_id: EVENT_SAMPLES['session.thread_status_idle'].session_thread_id }]);
    expect(logWebhooks(EVENT_SAMPLES['session.thread_status_running'])).toEqual([]);
    expect(logWebhooks(EVENT_SAMPLES['session.status_running'])).toEqual([{ type: 'session.status_run_started' }, { type: 'session.running' }]);
  });
});
