import 'server-only';
import { z } from 'zod';
import { ID_PATTERN } from '~/lib/ids';
import { WEBHOOK_EVENT_TYPES, WebhookEndpointCreate } from '~/lib/webhook-events';
import { createTRPCRouter, ownerProcedure } from '~/server/api/trpc';

const EndpointId = z.string().regex(ID_PATTERN.webhookEndpoint, 'must be a webhook endpoint id (wh_…)');
const DeliveryId = z.string().regex(ID_PATTERN.webhookDelivery, 'must be a webhook delivery id (whdl_…)');

/** The settings page's webhook endpoints: the owner's only. The signing secret is in create's answer only. */
export const webhooksRouter = createTRPCRouter({
  eventTypes: ownerProcedure.query(() => [...WEBHOOK_EVENT_TYPES]),
  list: ownerProcedure.query(({ ctx }) => ctx.runtime.webhooks.listEndpoints({ limit: 100 })),
  create: ownerProcedure
    .input(WebhookEndpointCreate)
    .mutation(({ ctx, input }) => ctx.runtime.webhooks.createEndpoint({ url: input.url, description: input.description ?? null, event_types: [...new Set(input.event_types ?? [])] })),
  delete: ownerProcedure.input(z.object({ id: EndpointId })).mutation(({ ctx, input }) => ctx.runtime.webhooks.deleteEndpoint(input.id)),
  deliveries: ownerProcedure.input(z.object({ endpointId: EndpointId })).query(({ ctx, input }) => ctx.runtime.webhooks.listDeliveries({ limit: 20, endpointId: input.endpointId })),
  redeliver: ownerProcedure.input(z.object({ id: DeliveryId })).mutation(({ ctx, input }) => ctx.runtime.webhooks.redeliver(input.id, new Date().toISOString())),
});
