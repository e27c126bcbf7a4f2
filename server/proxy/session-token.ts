import 'server-only';
import { randomBytes } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import type { Kysely } from 'kysely';
import type { Database } from '~/server/session/schema';

/**
 * The MCP proxy's session token: what the harness holds instead of a credential. It names one
 * session (`sub`), is meant for the proxy only (`aud`), and lives at most two minutes, so a token
 * that leaked anywhere is worth little, and only for that session's own servers.
 */
export const MCP_PROXY_AUDIENCE = 'paddock:mcp-proxy';
export const MAX_TOKEN_TTL_SECONDS = 120;
const DEFAULT_TTL_SECONDS = 60;

/** Why a token was refused; never the token itself. */
export class SessionTokenError extends Error {
  constructor(reason: string) {
    super(`MCP proxy: session token refused (${reason})`);
    this.name = 'SessionTokenError';
  }
}

export type SigningKey = () => Promise<Uint8Array>;

const KEY_NAME = 'mcp_proxy_signing_key';

/**
 * The proxy's signing key, made once in `server_secrets` (its own row, apart from the cookie key)
 * and shared by every instance: a token minted on one instance is good on another.
 */
export function proxySigningKey(db: Kysely<Database>): SigningKey {
  let key: Promise<Uint8Array> | null = null;
  const load = async () => {
    // Whoever inserts first wins; everyone then reads the same row.
    await db
      .insertInto('server_secrets')
      .values({ name: KEY_NAME, value: randomBytes(32).toString('base64') })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    const row = await db.selectFrom('server_secrets').select('value').where('name', '=', KEY_NAME).executeTakeFirstOrThrow();
    return new Uint8Array(Buffer.from(row.value, 'base64'));
  };
  return () => {
    key ??= load().catch((e: unknown) => {
      key = null;
      throw e;
    });
    return key;
  };
}

export async function mintSessionToken(key: Uint8Array, sessionId: string, ttlSeconds = DEFAULT_TTL_SECONDS): Promise<string> {
  const ttl = Math.min(Math.max(1, Math.floor(ttlSeconds)), MAX_TOKEN_TTL_SECONDS);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sessionId)
    .setAudience(MCP_PROXY_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(`${ttl}s`)
    .sign(key);
}

/** The session a token was minted for; throws SessionTokenError for anything else (wrong audience, expired, another key, `alg: none`, too long-lived). */
export async function verifySessionToken(key: Uint8Array, token: string): Promise<string> {
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: ['HS256'],
      audience: MCP_PROXY_AUDIENCE,
      requiredClaims: ['sub', 'exp', 'iat'],
      maxTokenAge: `${MAX_TOKEN_TTL_SECONDS}s`,
    });
    // A token signed with our key but promising a longer life than we ever mint is not ours.
    if (payload.exp! - payload.iat! > MAX_TOKEN_TTL_SECONDS) throw new SessionTokenError('lifetime over the limit');
    if (!payload.sub?.startsWith('sesn_')) throw new SessionTokenError('not a session');
    return payload.sub;
  } catch (e) {
    if (e instanceof SessionTokenError) throw e;
    const code = typeof e === 'object' && e !== null && 'code' in e ? String(e.code) : 'invalid';
    throw new SessionTokenError(code);
  }
}
