import 'server-only';
import { z } from 'zod';
import { InvalidInputError } from '~/lib/errors';
import { ID_PATTERN } from '~/lib/ids';
import { archiveDeployment, createDeployment, type DeploymentDeps, deploymentObject, pauseDeployment, runDeploymentNow, unpauseDeployment, updateDeployment } from '~/server/commands/deployment-commands';
import type { DeploymentRow } from '~/server/deployments/deployment-store';
import { Bool, CommonQuery, CreatedAtQuery, Limit, Page, createdAtRange, parseInput, queryObject } from '~/server/rest/query';
import type { RestRequest, Route } from '~/server/rest/route-table';

/** /v1/deployments and /v1/deployment_runs. */
const ListQuery = z
  .object({
    limit: Limit(100, 20),
    page: Page,
    agent_id: z.string().min(1).max(64).optional(),
    include_archived: Bool.optional(),
    status: z.enum(['active', 'paused']).optional(),
    ...CreatedAtQuery,
    ...CommonQuery,
  })
  .strict()
  .refine((q) => !(q.include_archived && q.status), { message: 'include_archived and status cannot be combined' });
const RunListQuery = z
  .object({
    limit: Limit(100, 20),
    page: Page,
    deployment_id: z.string().min(1).max(64).optional(),
    trigger_type: z.enum(['manual', 'schedule']).optional(),
    has_error: Bool.optional(),
    ...CreatedAtQuery,
    ...CommonQuery,
  })
  .strict();

function idOf(params: Record<string, string>, pattern: RegExp, what: string): string {
  const v = params.id ?? '';
  if (!pattern.test(v)) throw new InvalidInputError(`${what}_id: ${JSON.stringify(v.slice(0, 80))} must be a ${what} id`);
  return v;
}
const deploymentId = (p: Record<string, string>) => idOf(p, ID_PATTERN.deployment, 'deployment');
const deps = (rt: RestRequest['rt']): DeploymentDeps => rt;
const out = (d: DeploymentRow) => deploymentObject(d, new Date());

async function list({ rt, query }: RestRequest) {
  const q = parseInput(ListQuery, queryObject(query), 'query');
  const page = await rt.deployments.list({ limit: q.limit, page: q.page, agentId: q.agent_id, includeArchived: q.include_archived ?? false, status: q.status, createdAt: createdAtRange(q) });
  return { data: page.data.map(out), next_page: page.next_page };
}

async function listRuns({ rt, query }: RestRequest) {
  const q = parseInput(RunListQuery, queryObject(query), 'query');
  return rt.deployments.listRuns({ limit: q.limit, page: q.page, deploymentId: q.deployment_id, triggerType: q.trigger_type, hasError: q.has_error, createdAt: createdAtRange(q) });
}

export const deploymentRoutes: Route[] = [
  { method: 'POST', path: 'deployments', handler: async ({ rt, body }) => out(await createDeployment(deps(rt), body)) },
  { method: 'GET', path: 'deployments', handler: list },
  { method: 'GET', path: 'deployments/:id', handler: async ({ rt, params }) => out(await rt.deployments.get(deploymentId(params))) },
  { method: 'POST', path: 'deployments/:id', handler: async ({ rt, params, body }) => out(await updateDeployment(deps(rt), deploymentId(params), body)) },
  { method: 'POST', path: 'deployments/:id/archive', handler: async ({ rt, params }) => out(await archiveDeployment(deps(rt), deploymentId(params))) },
  { method: 'POST', path: 'deployments/:id/pause', handler: async ({ rt, params }) => out(await pauseDeployment(deps(rt), deploymentId(params))) },
  { method: 'POST', path: 'deployments/:id/unpause', handler: async ({ rt, params }) => out(await unpauseDeployment(deps(rt), deploymentId(params))) },
  { method: 'POST', path: 'deployments/:id/run', handler: async ({ rt, params }) => runDeploymentNow(deps(rt), deploymentId(params)) },
  { method: 'GET', path: 'deployment_runs', handler: listRuns },
  { method: 'GET', path: 'deployment_runs/:id', handler: async ({ rt, params }) => rt.deployments.getRun(idOf(params, ID_PATTERN.deploymentRun, 'deployment_run')) },
];
