import { z } from 'zod';

/**
 * Vaults and credentials as the Managed Agents API defines them (`@anthropic-ai/sdk`
 * `resources/beta/vaults`): the params a client sends, validated with zod, and the objects the
 * API returns. A credential's values (tokens, client secrets, secret values) are write-only: no
 * response type here has a field that could carry one.
 */

export const VAULT_ID = /^vlt_[A-Za-z0-9]{1,64}$/;
export const CREDENTIAL_ID = /^vcrd_[A-Za-z0-9]{1,64}$/;

const Metadata = z
  .record(z.string().min(1).max(64), z.string().max(512))
  .refine((m) => Object.keys(m).length <= 16, { message: 'at most 16 keys' });
const MetadataPatch = z
  .record(z.string().min(1).max(64), z.string().max(512).nullable())
  .refine((m) => Object.keys(m).length <= 16, { message: 'at most 16 keys' });

/** A secret as sent: a bounded, non-empty string (a long JWT fits). */
const Secret = z.string().min(1).max(16_384);
const DisplayName = z.string().trim().min(1).max(255);

/** An http(s) URL without user or password: a credential in a URL would be shown back. */
export const HttpUrl = z
  .string()
  .max(2048)
  .refine(
    (v) => {
      try {
        const u = new URL(v);
        return (u.protocol === 'https:' || u.protocol === 'http:') && u.username === '' && u.password === '' && u.hostname !== '';
      } catch {
        return false;
      }
    },
    { message: 'must be an http(s) URL without a user or password' },
  );

/** An environment variable's name, as a shell takes it. */
/**
 * Names a secret may not take in a hand's environment: the hand's own plumbing (its PATH, HOME,
 * proxy and CA settings, the loader) would break or be subverted.
 */
const RESERVED_SECRET_NAMES = new Set(['PATH', 'HOME', 'TMPDIR', 'LANG', 'TERM', 'PWD', 'SHELL', 'USER', 'LD_PRELOAD', 'LD_LIBRARY_PATH', 'NODE_OPTIONS']);

export function isReservedSecretName(name: string): boolean {
  return RESERVED_SECRET_NAMES.has(name.toUpperCase()) || /(^|_)PROXY$/i.test(name) || /^(SSL_CERT|NODE_EXTRA_CA|CURL_CA|REQUESTS_CA|GIT_SSL|PADDOCK_)/i.test(name);
}

const SecretName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'must be an environment variable name (letters, digits, _; not starting with a digit)')
  .refine((n) => !isReservedSecretName(n), 'is a name the hand needs for itself (PATH, HOME, proxy and CA settings, …): pick another');
const Host = z.string().regex(/^(\*\.)?[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(:\d{1,5})?$/, 'must be a host name (optionally *.domain, :port)');
const ExpiresAt = z.iso.datetime({ offset: true });

/** Headers a secret may never go in: the request's framing, and the proxy's own. */
const UNUSABLE_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'upgrade', 'te', 'trailer', 'keep-alive', 'proxy-connection', 'proxy-authorization']);
const HeaderName = z
  .string()
  .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/, 'must be an HTTP header name')
  .transform((h) => h.toLowerCase())
  .refine((h) => !UNUSABLE_HEADERS.has(h), 'is a header that frames the request (Host, Content-Length, Connection, …): a secret cannot go there');

/**
 * Where an `environment_variable` secret goes in a request. `header_names` is Paddock's own
 * addition to the API: the headers the value may go in (default `Authorization` only).
 */
const InjectionLocation = z
  .object({ body: z.boolean().optional(), header: z.boolean().optional(), header_names: z.array(HeaderName).min(1).max(10).optional() })
  .strict();

const Networking = z.discriminatedUnion('type', [
  z.object({ type: z.literal('unrestricted') }).strict(),
  z.object({ type: z.literal('limited'), allowed_hosts: z.array(Host).max(50) }).strict(),
]);

const TokenEndpointAuth = z.discriminatedUnion('type', [
  z.object({ type: z.literal('none') }).strict(),
  z.object({ type: z.literal('client_secret_basic'), client_secret: Secret }).strict(),
  z.object({ type: z.literal('client_secret_post'), client_secret: Secret }).strict(),
]);

const RefreshParams = z
  .object({
    client_id: z.string().min(1).max(512),
    refresh_token: Secret,
    token_endpoint: HttpUrl,
    token_endpoint_auth: TokenEndpointAuth,
    resource: z.string().max(2048).nullish(),
    scope: z.string().max(2048).nullish(),
  })
  .strict();

export const CredentialAuthParams = z.discriminatedUnion('type', [
  z.object({ type: z.literal('static_bearer'), token: Secret, mcp_server_url: HttpUrl }).strict(),
  z
    .object({
      type: z.literal('mcp_oauth'),
      access_token: Secret,
      mcp_server_url: HttpUrl,
      expires_at: ExpiresAt.nullish(),
      refresh: RefreshParams.nullish(),
    })
    .strict(),
  z
    .object({
      type: z.literal('environment_variable'),
      secret_name: SecretName,
      secret_value: Secret,
      networking: Networking,
      injection_location: InjectionLocation.optional(),
    })
    .strict(),
]);
export type CredentialAuthParams = z.output<typeof CredentialAuthParams>;

const TokenEndpointAuthUpdate = z.discriminatedUnion('type', [
  z.object({ type: z.literal('client_secret_basic'), client_secret: Secret.nullish() }).strict(),
  z.object({ type: z.literal('client_secret_post'), client_secret: Secret.nullish() }).strict(),
]);

export const CredentialAuthUpdateParams = z.discriminatedUnion('type', [
  z.object({ type: z.literal('static_bearer'), token: Secret.nullish() }).strict(),
  z
    .object({
      type: z.literal('mcp_oauth'),
      access_token: Secret.nullish(),
      expires_at: ExpiresAt.nullish(),
      refresh: z
        .object({ refresh_token: Secret.nullish(), scope: z.string().max(2048).nullish(), token_endpoint_auth: TokenEndpointAuthUpdate.optional() })
        .strict()
        .nullish(),
    })
    .strict(),
  z
    .object({
      type: z.literal('environment_variable'),
      secret_value: Secret.nullish(),
      networking: Networking.nullish(),
      injection_location: InjectionLocation.optional(),
    })
    .strict(),
]);
export type CredentialAuthUpdateParams = z.output<typeof CredentialAuthUpdateParams>;

/** Fields the SDK may send on any call and that change nothing here. */
const Common = { betas: z.array(z.string().max(128)).max(20).optional(), workspace_id: z.string().max(128).optional() };

export const VaultCreateParams = z.object({ display_name: DisplayName, metadata: Metadata.optional(), ...Common }).strict();
export const VaultUpdateParams = z.object({ display_name: DisplayName.nullish(), metadata: MetadataPatch.nullish(), ...Common }).strict();
export const CredentialCreateParams = z
  .object({ auth: CredentialAuthParams, display_name: DisplayName.nullish(), metadata: Metadata.optional(), ...Common })
  .strict();
export const CredentialUpdateParams = z
  .object({ auth: CredentialAuthUpdateParams.optional(), display_name: DisplayName.nullish(), metadata: MetadataPatch.nullish(), ...Common })
  .strict();

// ── what the API returns (never a value) ───────────────────────────────────

export interface Vault {
  id: string;
  type: 'vault';
  display_name: string;
  metadata: Record<string, string>;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}

export type TokenEndpointAuthResponse = { type: 'none' } | { type: 'client_secret_basic' } | { type: 'client_secret_post' };

export type CredentialAuth =
  | { type: 'static_bearer'; mcp_server_url: string }
  | {
      type: 'mcp_oauth';
      mcp_server_url: string;
      expires_at: string | null;
      refresh: { client_id: string; token_endpoint: string; token_endpoint_auth: TokenEndpointAuthResponse; resource: string | null; scope: string | null } | null;
    }
  | {
      type: 'environment_variable';
      secret_name: string;
      networking: { type: 'unrestricted' } | { type: 'limited'; allowed_hosts: string[] };
      /** `header_names` only when the credential names its headers (else `Authorization`). */
      injection_location: { body: boolean; header: boolean; header_names?: string[] };
    };

export interface Credential {
  id: string;
  type: 'vault_credential';
  vault_id: string;
  display_name: string | null;
  metadata: Record<string, string>;
  auth: CredentialAuth;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}

/** The secret fields a credential type stores sealed, by name; the rest of `auth` is plain. */
export type SecretField = 'token' | 'access_token' | 'refresh_token' | 'client_secret' | 'secret_value';

/** What makes two live credentials of one vault the same: an MCP server URL, or an env var's name. */
export function credentialKey(auth: CredentialAuth): string {
  return auth.type === 'environment_variable' ? `env:${auth.secret_name}` : `mcp:${auth.mcp_server_url}`;
}

export function describeCredentialKey(auth: CredentialAuth): string {
  return auth.type === 'environment_variable' ? `secret_name ${auth.secret_name}` : `mcp_server_url ${auth.mcp_server_url}`;
}
