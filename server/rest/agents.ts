import 'server-only';
import { z } from 'zod';
import { archiveAgent, archiveEnvironment, createAgent, createEnvironment, deleteEnvironment, updateAgent, updateEnvironment } from '~/server/commands/agent-commands';
import { Bool, CommonQuery, CreatedAtQuery, Limit, Page, createdAtRange, parseInput, queryObject } from '~/server/rest/query';
import type { Route } from '~/server/rest/route-table';

const ListQuery = z.object({ limit: Limit(100, 20), page: Page, include_archived: Bool.optional(), ...CreatedAtQuery, ...CommonQuery }).strict();
const RetrieveQuery = z.object({ version: z.coerce.number().int().positive().optional(), ...CommonQuery }).strict();
const VersionsQuery = z.object({ limit: Limit(100, 20), page: Page, ...CommonQuery }).strict();

/** /v1/agents: versioned agents (the store validates bodies with the API's zod schemas). */
export const agentRoutes: Route[] = [
  { method: 'POST', path: 'agents', handler: ({ rt, body }) => createAgent(rt, body) },
  {
    method: 'GET',
    path: 'agents',
    handler: ({ rt, query }) => {
      const q = parseInput(ListQuery, queryObject(query), 'query');
      return rt.agents.listAgents({ limit: q.limit, page: q.page ?? null, includeArchived: q.include_archived ?? false, createdAt: createdAtRange(q) });
    },
  },
  {
    method: 'GET',
    path: 'agents/:id',
    handler: ({ rt, params, query }) => rt.agents.getAgent(params.id!, parseInput(RetrieveQuery, queryObject(query), 'query').version),
  },
  { method: 'POST', path: 'agents/:id', handler: ({ rt, params, body }) => updateAgent(rt, params.id!, body) },
  { method: 'POST', path: 'agents/:id/archive', handler: ({ rt, params }) => archiveAgent(rt, params.id!) },
  {
    method: 'GET',
    path: 'agents/:id/versions',
    handler: ({ rt, params, query }) => {
      const q = parseInput(VersionsQuery, queryObject(query), 'query');
      return rt.agents.listAgentVersions(params.id!, { limit: q.limit, page: q.page ?? null });
    },
  },
];

const EnvListQuery = z.object({ limit: Limit(100, 20), page: Page, include_archived: Bool.optional(), ...CommonQuery }).strict();

/** /v1/environments: where a session's hands run. */
export const environmentRoutes: Route[] = [
  { method: 'POST', path: 'environments', handler: ({ rt, body }) => createEnvironment(rt, body) },
  {
    method: 'GET',
    path: 'environments',
    handler: ({ rt, query }) => {
      const q = parseInput(EnvListQuery, queryObject(query), 'query');
      return rt.agents.listEnvironments({ limit: q.limit, page: q.page ?? null, includeArchived: q.include_archived ?? false });
    },
  },
  { method: 'GET', path: 'environments/:id', handler: ({ rt, params }) => rt.agents.getEnvironment(params.id!) },
  { method: 'POST', path: 'environments/:id', handler: ({ rt, params, body }) => updateEnvironment(rt, params.id!, body) },
  { method: 'POST', path: 'environments/:id/archive', handler: ({ rt, params }) => archiveEnvironment(rt, params.id!) },
  { method: 'DELETE', path: 'environments/:id', handler: ({ rt, params }) => deleteEnvironment(rt, params.id!) },
];
