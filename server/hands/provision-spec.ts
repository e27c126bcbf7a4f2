import 'server-only';
import { ToolError } from '~/lib/hand';
import { type NetworkPolicy, sessionNetworkPolicy } from '~/lib/network-policy';
import type { ProvisionSpec } from '~/server/hands/provisioner';
import type { EnvironmentConfig } from '~/lib/agent';
import type { HandKind } from '~/lib/hand';
import type { HandResources } from '~/server/hands/provisioner';
import type { HandSecret } from '~/server/hands/sandbox/hand-secret';
import type { HandRepositories } from '~/server/hands/repository-port';
import type { SessionRows } from '~/server/session/store';
import type { HandSecretLoader } from '~/server/hands/sandbox/hand-secret';

export interface ProvisionRequest {
  kind: HandKind;
  endpoint?: string;
  resources?: HandResources;
}

/** What a provision spec is made from: the session's row and environment, the server's network settings, its endpoints and secrets. */
export interface SpecDeps {
  store: Pick<SessionRows, 'getSession'>;
  /** Extra hosts sandbox hands (and web_fetch) may reach, on top of a session's own `allowed_domains`. */
  allowedDomains?: string[];
  /** A session's environment's config (null when it is gone): its networking is part of the session's network policy. */
  environment?: (environmentId: string) => Promise<EnvironmentConfig | null>;
  /** `PADDOCK_ALLOW_UNRESTRICTED_NETWORK`: an environment with unrestricted networking gets it. */
  allowUnrestrictedNetwork?: boolean;
  /** Operator-configured remote endpoints the brain may attach by name (tokens stay here). */
  remoteEndpoints?: Record<string, { url: string; token?: string }>;
  /** A session's repositories: the git proxy on its hands' allowlist. */
  repositories?: Pick<HandRepositories, 'hosts'>;
  /** A session's `environment_variable` secrets (decrypted by the vault, never here): for its sandbox hands' egress proxies. */
  handSecrets?: (sessionId: string) => Promise<HandSecret[]>;
}

/**
   * What a session may reach over the network (read fresh: its environment may have changed): the
   * one answer its sandbox hands and the web_fetch tool both go by.
   */
export async function networkPolicyOf(o: SpecDeps, sessionId: string): Promise<NetworkPolicy> {
  const session = await o.store.getSession(sessionId);
  const environment = session?.environment_id && o.environment ? await o.environment(session.environment_id) : null;
  return sessionNetworkPolicy({
    serverHosts: o.allowedDomains ?? [],
    sessionMetadata: session?.metadata,
    environment,
    allowUnrestricted: o.allowUnrestrictedNetwork ?? false,
  });
}

  /**
   * Loads the session's secrets at each start of one of its sandbox hands, when it has any now
   * (else the hand may come from the warm pool). A local hand has no egress proxy: it gets none.
   */
async function secretLoader(o: SpecDeps, sessionId: string): Promise<HandSecretLoader | undefined> {
    const load = o.handSecrets;
    let first = load ? await load(sessionId) : [];
    if (!load || first.length === 0) return undefined;
    // The start that follows uses what was just read; a later one (a resume) reads afresh.
    return () => {
      const now = first;
      first = [];
      return now.length > 0 ? Promise.resolve(now) : load(sessionId);
    };
  }

/** What a hand of the requested kind is provisioned as, for this session now. */
export async function provisionSpec(o: SpecDeps, sessionId: string, request: ProvisionRequest): Promise<ProvisionSpec> {
    switch (request.kind) {
      case 'memory':
        return { kind: 'memory' };
      case 'sandbox':
      case 'local': {
        const network = await networkPolicyOf(o, sessionId);
        // The git proxy only for hands (web_fetch never gets it), only when there are repositories.
        const git = (await o.repositories?.hosts(sessionId)) ?? [];
        const secrets = request.kind === 'sandbox' ? await secretLoader(o, sessionId) : undefined;
        return {
          kind: request.kind,
          allowedDomains: [...network.hosts, ...git],
          ...(secrets ? { secrets } : {}),
          ...(network.type === 'unrestricted' ? { network: 'unrestricted' as const } : {}),
          ...(request.resources ? { resources: request.resources } : {}),
        };
      }
      case 'remote': {
        const name = request.endpoint;
        const endpoint = name ? o.remoteEndpoints?.[name] : undefined;
        if (!name || !endpoint) {
          const known = Object.keys(o.remoteEndpoints ?? {});
          throw new ToolError(`a remote hand needs "endpoint", one of the configured endpoints: ${known.length > 0 ? known.join(', ') : 'none configured (PADDOCK_REMOTE_HANDS)'}`);
        }
        return { kind: 'remote', transport: 'http', url: endpoint.url, ...(endpoint.token ? { token: endpoint.token } : {}) };
      }
      case 'browser':
        throw new ToolError('browser hands are registered by a browser tab, not provisioned');
    }
}
