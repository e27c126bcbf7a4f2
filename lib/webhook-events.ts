import { z } from 'zod';

/**
 * The webhook event names the SDK's `BetaWebhookEventData` lists; an endpoint subscribes to some
 * (none: all). Paddock sends those it has something for (WEBHOOK_EVENTS_SENT: commands' lifecycle
 * events, and the session log's status and progress events, lib/log-webhooks.ts); the rest are
 * accepted in a subscription so one written for the hosted API works.
 */
export const WEBHOOK_EVENT_TYPES = [
  'session.created', 'session.pending', 'session.running', 'session.idled', 'session.requires_action', 'session.archived', 'session.deleted',
  'session.status_rescheduled', 'session.status_run_started', 'session.status_idled', 'session.status_terminated', 'session.thread_created',
  'session.thread_idled', 'session.thread_terminated', 'session.outcome_evaluation_ended', 'session.updated', 'session.budget_reached',
  'vault.created', 'vault.archived', 'vault.deleted', 'vault_credential.created', 'vault_credential.archived', 'vault_credential.deleted', 'vault_credential.refresh_failed',
  'agent.created', 'agent.archived', 'agent.deleted', 'agent.updated',
  'deployment.created', 'deployment.updated', 'deployment.paused', 'deployment.unpaused', 'deployment.archived', 'deployment.deleted',
  'deployment_run.started', 'deployment_run.succeeded', 'deployment_run.failed',
  'environment.created', 'environment.updated', 'environment.archived', 'environment.deleted',
  'memory_store.created', 'memory_store.archived', 'memory_store.deleted',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** What Paddock sends today (docs/deployments-and-webhooks.md says from where). */
export const WEBHOOK_EVENTS_SENT: readonly WebhookEventType[] = [
  'session.created', 'session.archived', 'session.deleted',
  'deployment.created', 'deployment.updated', 'deployment.paused', 'deployment.unpaused', 'deployment.archived',
  'deployment_run.started', 'deployment_run.failed',
  'agent.created', 'agent.updated', 'agent.archived',
  'environment.created', 'environment.updated', 'environment.archived', 'environment.deleted',
  'vault.created', 'vault.archived', 'vault.deleted', 'vault_credential.created', 'vault_credential.archived', 'vault_credential.deleted',
  'memory_store.created', 'memory_store.archived', 'memory_store.deleted',
  // From the session log (lib/log-webhooks.ts).
  'session.status_run_started', 'session.status_idled', 'session.status_rescheduled', 'session.status_terminated', 'session.budget_reached',
  'session.thread_created', 'session.thread_idled', 'session.thread_terminated', 'session.outcome_evaluation_ended', 'session.updated',
];

/** A new endpoint: an http(s) URL without credentials, the events it wants (none: all). */
export const WebhookEndpointCreate = z
  .object({
    url: z
      .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
      .max(2048)
      // Zod runs a refinement even after the URL check failed: a string that is no URL is left to that check.
      .refine((u) => !URL.canParse(u) || (!new URL(u).username && !new URL(u).password), { message: 'must not carry credentials' }),
    description: z.string().max(512).nullish(),
    event_types: z.array(z.enum(WEBHOOK_EVENT_TYPES)).max(WEBHOOK_EVENT_TYPES.length).optional(),
  })
  .strict();
