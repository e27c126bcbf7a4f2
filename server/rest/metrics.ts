import 'server-only';
import { scrape } from '~/server/metrics/metrics';
import type { Route } from '~/server/rest/route-table';

/**
 * `GET /v1/metrics` (also served at `/metrics`): this process's Prometheus metrics, for an API key
 * like every /v1 route (Prometheus sends it as `Authorization: Bearer`). Each instance answers for
 * itself: scrape every instance.
 */
export const metricsRoutes: Route[] = [
  {
    method: 'GET',
    path: 'metrics',
    handler: async () => {
      const { body, contentType } = await scrape();
      return new Response(body, { headers: { 'content-type': contentType, 'cache-control': 'no-store' } });
    },
  },
];
