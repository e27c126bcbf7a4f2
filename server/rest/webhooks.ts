import 'server-only';
import { z } from 'zod';
import { InvalidInputError } from '~/lib/errors';
import { ID_PATTERN } from '~/lib/ids';
import { WebhookEndpointCreate } from '~/lib/webhook-events';
import { CommonQuery, Limit, Page, parseInput, queryObject } from '~/server/rest/query';
import type { RestRequest, Route } from '~/server/rest/route-table';

/**
 * /v1/webhook_endpoints and /v1/webhook_deliveries: Paddock's own shape (the hosted API registers
 * endpoints in its console). The signing secret is in `create`'s answer only; deliveries carry
 * their attempts (time, status code, error) and can be sent again.
 */
const ListQuery = z.object({ limit: Limit(100, 20), page: Page, ...CommonQuery }).strict();
const DeliveryQuery = z.object({ limit: Limit(100, 20), page: Page, endpoint_id: z.string().min(1).max(64).optional(), ...CommonQuery }).strict();

function idOf(params: Record<string, string>, pattern: RegExp, what: string): string {
  const v = params.id ?? '';
  if (!pattern.test(v)) throw new InvalidInputError(`${what}_id: ${JSON.stringify(v.slice(0, 80))} must be a ${what} id`);
  return v;
}
const endpointId = (p: Record<string, string>) => idOf(p, ID_PATTERN.webhookEndpoint, 'webhook_endpoint');
const deliveryId = (p: Record<string, string>) => idOf(p, ID_PATTERN.webhookDelivery, 'webhook_delivery');

export const webhookRoutes: Route[] = [
  {
    method: 'POST',
    path: 'webhook_endpoints',
    handler: ({ rt, body }: RestRequest) => {
      const p = parseInput(WebhookEndpointCreate, body, 'body');
      return rt.webhooks.createEndpoint({ url: p.url, description: p.description ?? null, event_types: [...new Set(p.event_types ?? [])] });
    },
  },
  { method: 'GET', path: 'webhook_endpoints', handler: ({ rt, query }: RestRequest) => rt.webhooks.listEndpoints(parseInput(ListQuery, queryObject(query), 'query')) },
  { method: 'GET', path: 'webhook_endpoints/:id', handler: ({ rt, params }: RestRequest) => rt.webhooks.getEndpoint(endpointId(params)) },
  { method: 'DELETE', path: 'webhook_endpoints/:id', handler: ({ rt, params }: RestRequest) => rt.webhooks.deleteEndpoint(endpointId(params)) },
  {
    method: 'GET',
    path: 'webhook_deliveries',
    handler: ({ rt, query }: RestRequest) => {
      const q = parseInput(DeliveryQuery, queryObject(query), 'query');
      return rt.webhooks.listDeliveries({ limit: q.limit, page: q.page, endpointId: q.endpoint_id });
    },
  },
  { method: 'GET', path: 'webhook_deliveries/:id', handler: ({ rt, params }: RestRequest) => rt.webhooks.getDelivery(deliveryId(params)) },
  { method: 'POST', path: 'webhook_deliveries/:id/redeliver', handler: ({ rt, params }: RestRequest) => rt.webhooks.redeliver(deliveryId(params), new Date().toISOString()) },
];
