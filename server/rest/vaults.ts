import 'server-only';
import { z } from 'zod';
import { archiveCredential, archiveVault, createCredential, createVault, deleteCredential, deleteVault } from '~/server/commands/vault-commands';
import { validateMcpOAuth } from '~/server/proxy/mcp-validate';
import { Bool, CommonQuery, Limit, Page, parseInput, queryObject } from '~/server/rest/query';
import type { Route } from '~/server/rest/route-table';

const ListQuery = z.object({ limit: Limit(100, 20), page: Page, include_archived: Bool.optional(), ...CommonQuery }).strict();
const OneQuery = z.object({ ...CommonQuery }).strict();

/**
 * /v1/vaults and their credentials. The store validates bodies with the API's zod schemas and
 * returns objects without values: a credential's secrets are write-only.
 */
export const vaultRoutes: Route[] = [
  { method: 'POST', path: 'vaults', handler: ({ rt, body }) => createVault(rt, body) },
  {
    method: 'GET',
    path: 'vaults',
    handler: ({ rt, query }) => {
      const q = parseInput(ListQuery, queryObject(query), 'query');
      return rt.vaults.listVaults({ limit: q.limit, page: q.page ?? null, includeArchived: q.include_archived ?? false });
    },
  },
  {
    method: 'GET',
    path: 'vaults/:id',
    handler: ({ rt, params, query }) => {
      parseInput(OneQuery, queryObject(query), 'query');
      return rt.vaults.getVault(params.id!);
    },
  },
  { method: 'POST', path: 'vaults/:id', handler: ({ rt, params, body }) => rt.vaults.updateVault(params.id!, body) },
  { method: 'POST', path: 'vaults/:id/archive', handler: ({ rt, params }) => archiveVault(rt, params.id!) },
  { method: 'DELETE', path: 'vaults/:id', handler: ({ rt, params }) => deleteVault(rt, params.id!) },

  { method: 'POST', path: 'vaults/:vault/credentials', handler: ({ rt, params, body }) => createCredential(rt, params.vault!, body) },
  {
    method: 'GET',
    path: 'vaults/:vault/credentials',
    handler: ({ rt, params, query }) => {
      const q = parseInput(ListQuery, queryObject(query), 'query');
      return rt.vaults.listCredentials(params.vault!, { limit: q.limit, page: q.page ?? null, includeArchived: q.include_archived ?? false });
    },
  },
  {
    method: 'GET',
    path: 'vaults/:vault/credentials/:id',
    handler: ({ rt, params, query }) => {
      parseInput(OneQuery, queryObject(query), 'query');
      return rt.vaults.getCredential(params.vault!, params.id!);
    },
  },
  { method: 'POST', path: 'vaults/:vault/credentials/:id', handler: ({ rt, params, body }) => rt.vaults.updateCredential(params.vault!, params.id!, body) },
  { method: 'POST', path: 'vaults/:vault/credentials/:id/archive', handler: ({ rt, params }) => archiveCredential(rt, params.vault!, params.id!) },
  { method: 'DELETE', path: 'vaults/:vault/credentials/:id', handler: ({ rt, params }) => deleteCredential(rt, params.vault!, params.id!) },
  {
    method: 'POST',
    path: 'vaults/:vault/credentials/:id/mcp_oauth_validate',
    // A live probe of the MCP server with the stored token, and a refresh on a refusal (server/proxy).
    handler: async ({ rt, params }) => validateMcpOAuth(rt.vaultSecrets, await rt.vaults.getCredential(params.vault!, params.id!)),
  },
];
