import 'server-only';
import { z } from 'zod';
import { addResource, getResource, listResources, removeResource, resourceKey, updateResourceToken } from '~/server/commands/resource-commands';
import { CommonQuery, Limit, Page, parseInput, queryObject } from '~/server/rest/query';
import type { RestRequest, Route } from '~/server/rest/route-table';
import { loadSession } from '~/server/rest/session-id';
import { decodeCursor, encodeCursor } from '~/lib/page-cursor';
import { pageOf } from '~/server/session/keyset-page';

const ListQuery = z.object({ limit: Limit(100, 20), page: Page, ...CommonQuery }).strict();
/** Only a repository's token can change (the SDK's `ResourceUpdateParams`). */
const UpdateParams = z.object({ authorization_token: z.string().min(1).max(4096).regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces') }).strict();

async function add({ rt, params, body }: RestRequest) {
  const session = await loadSession(rt, params.id);
  return addResource(rt, session.id, body);
}

async function list({ rt, params, query }: RestRequest) {
  const session = await loadSession(rt, params.id);
  const q = parseInput(ListQuery, queryObject(query), 'query');
  // Ids sort by creation (ULIDs): the page cursor is the last id served.
  const scope = `resources:${session.id}`;
  const after = q.page === undefined ? null : decodeCursor(q.page, scope, [z.string()])[0];
  const all = (await listResources(rt, session.id)).filter((r) => after === null || resourceKey(r) > after);
  return pageOf(all, q.limit, (last) => encodeCursor(scope, [resourceKey(last)]));
}

async function retrieve({ rt, params }: RestRequest) {
  const session = await loadSession(rt, params.id);
  return getResource(rt, session.id, params.rid ?? '');
}

async function update({ rt, params, body }: RestRequest) {
  const session = await loadSession(rt, params.id);
  const p = parseInput(UpdateParams, body, 'body');
  return updateResourceToken(rt, session.id, params.rid ?? '', p.authorization_token);
}

async function remove({ rt, params }: RestRequest) {
  const session = await loadSession(rt, params.id);
  return removeResource(rt, session.id, params.rid ?? '');
}

/** /v1/sessions/{id}/resources: a token goes in (add, update) and never comes back out. */
export const resourceRoutes: Route[] = [
  { method: 'POST', path: 'sessions/:id/resources', handler: add },
  { method: 'GET', path: 'sessions/:id/resources', handler: list },
  { method: 'GET', path: 'sessions/:id/resources/:rid', handler: retrieve },
  { method: 'POST', path: 'sessions/:id/resources/:rid', handler: update },
  { method: 'DELETE', path: 'sessions/:id/resources/:rid', handler: remove },
];
