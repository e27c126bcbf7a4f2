import { z } from 'zod';

/**
 * The webhook event names the SDK's `BetaWebhookEventData` lists (all of them: a type check below
 * fails when the SDK adds one); an endpoint subscribes to some (none: all). Paddock sends those it
 * has something for (WEBHOOK_EVENTS_SENT: commands' lifecycle events, and the session log's status
 * and progress events, lib/log-webhooks.ts); WEBHOOK_EVENTS_NOT_SENT says why it never sends the
 * rest, which are still accepted in a subscription so one written for the hosted API works.
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
  'user_profile.enforcement_action_opened', 'user_profile.enforcement_action_resolved', 'user_profile.program_status_updated',
  'external_key.failed', 'external_key.recovered', 'external_storage.failed', 'external_storage.recovered',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** What Paddock sends (docs/deployments-and-webhooks.md says from where). */
export const WEBHOOK_EVENTS_SENT = [
  'session.created', 'session.archived', 'session.deleted',
  'deployment.created', 'deployment.updated', 'deployment.paused', 'deployment.unpaused', 'deployment.archived',
  'deployment_run.started', 'deployment_run.succeeded', 'deployment_run.failed',
  'agent.created', 'agent.updated', 'agent.archived',
  'environment.created', 'environment.updated', 'environment.archived', 'environment.deleted',
  'vault.created', 'vault.archived', 'vault.deleted', 'vault_credential.created', 'vault_credential.archived', 'vault_credential.deleted',
  'vault_credential.refresh_failed',
  'memory_store.created', 'memory_store.archived', 'memory_store.deleted',
  // From the session log (lib/log-webhooks.ts).
  'session.status_run_started', 'session.status_idled', 'session.status_rescheduled', 'session.status_terminated', 'session.budget_reached',
  'session.running', 'session.idled', 'session.requires_action',
  'session.thread_created', 'session.thread_idled', 'session.thread_terminated', 'session.outcome_evaluation_ended', 'session.updated',
] as const satisfies readonly WebhookEventType[];

/** Every listed name Paddock never sends, and why: exhaustive, so a name is either sent or explained. */
export const WEBHOOK_EVENTS_NOT_SENT: Record<Exclude<WebhookEventType, (typeof WEBHOOK_EVENTS_SENT)[number]>, string> = {
  'session.pending': 'a session is idle or running at once: Paddock has no pending status (a wake waiting for a harness is still idle)',
  'agent.deleted': 'agents are archived, never deleted (the API has no agent delete)',
  'deployment.deleted': 'deployments are archived, never deleted (the API has no deployment delete)',
  'user_profile.enforcement_action_opened': 'Paddock has no user profiles',
  'user_profile.enforcement_action_resolved': 'Paddock has no user profiles',
  'user_profile.program_status_updated': 'Paddock has no user profiles',
  'external_key.failed': 'Paddock has no external (customer-managed) keys: its master key is its own',
  'external_key.recovered': 'Paddock has no external (customer-managed) keys: its master key is its own',
  'external_storage.failed': 'Paddock has no external storage buckets to check',
  'external_storage.recovered': 'Paddock has no external storage buckets to check',
};

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
