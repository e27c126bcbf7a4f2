import 'server-only';
import { parseCookie, stringifySetCookie } from 'cookie';
import { SignJWT, jwtVerify } from 'jose';
import { SHARE_HEADER } from '~/lib/share-token';
import { VISITOR_HEADER, widgetAllows } from '~/lib/widget';
import type { AccessStore, ApiKeyInfo } from '~/server/access/access-store';
import { ENVIRONMENT_KEY_PREFIX, type EnvironmentKeys } from '~/server/access/environment-keys';
import type { WorkRow } from '~/server/session/work-store';
import { hashSecret, mac, newSecret, sameSecret } from '~/server/access/secrets';
import type { ShareLinks } from '~/server/access/share-links';
import type { Widgets } from '~/server/widgets/widgets';

/** Who is calling. Every procedure and route decides from this alone. */
export type Caller =
  /** The person who runs Paddock, signed in in a browser (a cookie). */
  | { kind: 'owner'; session: string }
  /** A program with an API key (`configured`: the PADDOCK_API_KEY from the environment). */
  | { kind: 'api_key'; keyId: string }
  /**
   * Someone holding a share link (`/share/<token>`): reads ONE session, writes nothing. The token
   * comes in the `x-paddock-share` header (a subscription: the `share` connection parameter).
   */
  | { kind: 'viewer'; shareId: string; sessionId: string; hideFiles: boolean }
  /**
   * An anonymous visitor of a docs widget (`/embed/<agent>` framed by an allowed origin): creates
   * sessions with that one agent, sends messages to and reads its own, nothing else. Its token (a
   * signed JWT naming a random visitor id, the agent and the origin) comes in `x-paddock-visitor`
   * (a subscription: the `visitor` connection parameter); `visitor` is the SHA-256 of the id.
   */
  | { kind: 'visitor'; visitor: string; agentId: string; origin: string }
  /**
   * A self-hosted environment's worker, with that environment's key: opens only that
   * environment's work routes (server/access/work-callers.ts).
   */
  | { kind: 'environment_key'; keyId: string; environmentId: string }
  /**
   * The credential in one live work item's secret (`sessions_token`): opens that item's heartbeat
   * and stop, and reads its session and answers its tool calls; dead once the item stops.
   */
  | { kind: 'work_item'; workId: string; environmentId: string; sessionId: string | null }
  | { kind: 'anonymous' };

export const ANONYMOUS: Caller = { kind: 'anonymous' };
/**
 * The session cookie's name. Browsers share cookies between ports of one host, so (as Jupyter
 * does) the port people use is part of the name: two Paddocks on localhost:3000 and :3001 keep
 * their own. Behind a proxy that is the public URL's port (the Host an instance sees may name the
 * instance, and change when the proxy fails over to another one).
 */
export function sessionCookieName(host: string | null, publicUrl?: string): string {
  const port = publicUrl ? new URL(publicUrl).port : /:(\d+)$/.exec(host ?? '')?.[1];
  return port ? `paddock_session_${port}` : 'paddock_session';
}
export const API_KEY_PREFIX = 'pdk_';
/** A work item's token: `pdws_<work id>.<MAC>`, re-derivable on every instance, never stored. */
export const WORK_TOKEN_PREFIX = 'pdws_';
const SIGNIN_TOKEN_TTL_MS = 24 * 60 * 60_000;
const ISSUER = 'paddock';
const VISITOR_AUDIENCE = 'paddock:widget';
/** A visitor stays the same visitor (its conversations listed) this long after its last visit. */
const VISITOR_TOKEN_DAYS = 30;

export interface AccessOptions {
  store: AccessStore;
  /** A fixed sign-in token (PADDOCK_OWNER_TOKEN), reusable; one-time tokens work besides it. */
  ownerToken?: string | undefined;
  /** An API key from the environment (PADDOCK_API_KEY). */
  apiKey?: string | undefined;
  sessionDays: number;
  /** PADDOCK_PUBLIC_URL: the address people use, whose port names the cookie. */
  publicUrl?: string | undefined;
  /** Share links (absent: every share token is anonymous). */
  shares?: ShareLinks;
  /** Docs widgets (absent: every visitor token is anonymous). */
  widgets?: Widgets;
  /** Self-hosted environments' keys (absent: every environment key is anonymous). */
  environmentKeys?: EnvironmentKeys;
  /** A live work item by id (absent: every work token is anonymous). */
  liveWorkItem?: (id: string) => Promise<WorkRow | null>;
}

export interface SignedIn {
  /** The Set-Cookie header value. */
  setCookie: string;
}

/**
 * Identity: sign-in (one-time or configured owner token → a signed, expiring, HttpOnly cookie
 * backed by a row, so signing out ends it everywhere), API keys (stored hashed) and browser-tab
 * secrets (a MAC the server re-derives, so any instance can check it).
 */
export class Access {
  constructor(private readonly o: AccessOptions) {}

  /**
   * The caller a request's headers name. Anything malformed, expired or revoked is anonymous. A
   * request that carries a share token is that link's viewer or nobody, whatever cookie or key
   * comes with it: the share page never acts as its owner, even in the owner's browser.
   */
  async identify(headers: Headers, shareParam?: string | null, visitorParam?: string | null): Promise<Caller> {
    const share = headers.get(SHARE_HEADER) ?? shareParam ?? null;
    if (share !== null) return this.byShareToken(share);
    // The same for a widget's visitor: never the owner, even in the owner's browser.
    const visitor = headers.get(VISITOR_HEADER) ?? visitorParam ?? null;
    if (visitor !== null) return this.byVisitorToken(visitor);
    const key = apiKeyOf(headers);
    if (key !== null) return this.byApiKey(key);
    const cookie = parseCookie(headers.get('cookie') ?? '')[sessionCookieName(headers.get('host'), this.o.publicUrl)];
    if (!cookie) return ANONYMOUS;
    return this.byCookie(cookie);
  }

  async byCookie(cookie: string): Promise<Caller> {
    // Only a bad cookie is anonymous; a database that cannot answer is its own error (a 503),
    // never "signed out", which would send the owner to the sign-in page during an outage.
    const key = await this.o.store.signingKey();
    let sid: string;
    try {
      const { payload } = await jwtVerify(cookie, key, { issuer: ISSUER, algorithms: ['HS256'] });
      sid = typeof payload.sid === 'string' ? payload.sid : '';
    } catch {
      return ANONYMOUS;
    }
    if (!sid || !(await this.o.store.ownerSessionValid(hashSecret(sid), Date.now()))) return ANONYMOUS;
    return { kind: 'owner', session: hashSecret(sid) };
  }

  /** The viewer a share token names; re-read on every request (and by a follow every few seconds), so a revoke ends it everywhere. */
  async byShareToken(token: string): Promise<Caller> {
    if (!this.o.shares || token.length > 200) return ANONYMOUS;
    const found = await this.o.shares.lookup(token);
    if (found.state !== 'live') return ANONYMOUS;
    return { kind: 'viewer', shareId: found.link.id, sessionId: found.link.session_id, hideFiles: found.link.hide_files };
  }

  /**
   * The visitor a widget token names. The agent's widget settings are read on every request: a
   * widget turned off, or an origin no longer allowed, ends its visitors at once, everywhere.
   */
  async byVisitorToken(token: string): Promise<Caller> {
    if (!this.o.widgets || token.length > 1_000) return ANONYMOUS;
    let claims: { vid: string; agt: string; org: string };
    try {
      const { payload } = await jwtVerify(token, await this.o.store.signingKey(), { issuer: ISSUER, audience: VISITOR_AUDIENCE, algorithms: ['HS256'] });
      if (typeof payload.vid !== 'string' || typeof payload.agt !== 'string' || typeof payload.org !== 'string') return ANONYMOUS;
      claims = { vid: payload.vid, agt: payload.agt, org: payload.org };
    } catch {
      return ANONYMOUS;
    }
    const settings = await this.o.widgets.store.settings(claims.agt);
    if (!widgetAllows(settings, claims.org)) return ANONYMOUS;
    return { kind: 'visitor', visitor: hashSecret(claims.vid), agentId: claims.agt, origin: claims.org };
  }

  /** A new visitor of an agent's widget from an origin (already checked allowed): its token, kept by the widget. */
  async newVisitorToken(agentId: string, origin: string): Promise<{ token: string; visitor: string }> {
    const vid = newSecret('');
    const token = await new SignJWT({ vid, agt: agentId, org: origin })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(ISSUER)
      .setAudience(VISITOR_AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(`${VISITOR_TOKEN_DAYS}d`)
      .sign(await this.o.store.signingKey());
    return { token, visitor: hashSecret(vid) };
  }

  get widgets(): Widgets {
    if (!this.o.widgets) throw new Error('widgets are not configured');
    return this.o.widgets;
  }

  get shares(): ShareLinks {
    if (!this.o.shares) throw new Error('share links are not configured');
    return this.o.shares;
  }

  private async byApiKey(key: string): Promise<Caller> {
    if (this.o.apiKey && sameSecret(key, this.o.apiKey)) return { kind: 'api_key', keyId: 'configured' };
    if (key.startsWith(ENVIRONMENT_KEY_PREFIX)) {
      const found = await this.o.environmentKeys?.use(key);
      return found ? { kind: 'environment_key', keyId: found.id, environmentId: found.environment_id } : ANONYMOUS;
    }
    if (key.startsWith(WORK_TOKEN_PREFIX)) return this.byWorkToken(key);
    if (!key.startsWith(API_KEY_PREFIX) || key.length > 200) return ANONYMOUS;
    const found = await this.o.store.useApiKey(hashSecret(key));
    return found ? { kind: 'api_key', keyId: found.id } : ANONYMOUS;
  }

  /** A new one-time sign-in token (printed at start as part of a URL). */
  async newSigninToken(): Promise<string> {
    const token = newSecret('');
    await this.o.store.addSigninToken(hashSecret(token), Date.now() + SIGNIN_TOKEN_TTL_MS);
    return token;
  }

  /** Exchanges a sign-in token for a session cookie; null when the token is wrong, used or expired. */
  async signIn(token: string, req: { host: string | null; secure: boolean }): Promise<SignedIn | null> {
    if (token.length === 0 || token.length > 200) return null;
    const fixed = this.o.ownerToken !== undefined && sameSecret(token, this.o.ownerToken);
    if (!fixed && !(await this.o.store.takeSigninToken(hashSecret(token), Date.now()))) return null;
    const sid = newSecret('');
    const maxAge = this.o.sessionDays * 24 * 60 * 60;
    const expires = Date.now() + maxAge * 1000;
    await this.o.store.addOwnerSession(hashSecret(sid), expires);
    const jwt = await new SignJWT({ sid })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(ISSUER)
      .setIssuedAt()
      .setExpirationTime(Math.floor(expires / 1000))
      .sign(await this.o.store.signingKey());
    return { setCookie: sessionCookie(sessionCookieName(req.host, this.o.publicUrl), jwt, maxAge, req.secure) };
  }

  /** Ends the session the cookie names (on every instance) and returns the header that clears it. */
  async signOut(headers: Headers, secure: boolean): Promise<string> {
    const caller = await this.identify(headers);
    if (caller.kind === 'owner') await this.o.store.deleteOwnerSession(caller.session);
    return sessionCookie(sessionCookieName(headers.get('host'), this.o.publicUrl), '', 0, secure);
  }

  /** Makes an API key: the key itself is returned this once and only its hash is kept. */
  async createApiKey(name: string): Promise<{ key: string; id: string; prefix: string }> {
    const key = newSecret(API_KEY_PREFIX);
    const prefix = key.slice(0, API_KEY_PREFIX.length + 6);
    const info = await this.o.store.addApiKey({ name, hash: hashSecret(key), prefix });
    return { key, id: info.id, prefix };
  }

  listApiKeys(): Promise<ApiKeyInfo[]> {
    return this.o.store.listApiKeys();
  }

  revokeApiKey(id: string): Promise<boolean> {
    return this.o.store.revokeApiKey(id);
  }

  /** The token a work item's secret carries (its `sessions_token`). */
  async workToken(workId: string): Promise<string> {
    return `${WORK_TOKEN_PREFIX}${workId}.${mac(await this.o.store.signingKey(), 'work', workId)}`;
  }

  private async byWorkToken(token: string): Promise<Caller> {
    if (!this.o.liveWorkItem || token.length > 200) return ANONYMOUS;
    const dot = token.indexOf('.');
    if (dot < 0) return ANONYMOUS;
    const workId = token.slice(WORK_TOKEN_PREFIX.length, dot);
    if (!sameSecret(token, await this.workToken(workId))) return ANONYMOUS;
    const item = await this.o.liveWorkItem(workId);
    if (!item) return ANONYMOUS;
    return { kind: 'work_item', workId, environmentId: item.environment_id, sessionId: item.data_type === 'session' ? item.data_id : null };
  }

  /** The secret a browser tab attached as a hand must show with its heartbeats, claims and results. */
  async tabSecret(sessionId: string, hand: string, tabId: string): Promise<string> {
    return mac(await this.o.store.signingKey(), 'tab', sessionId, hand, tabId);
  }

  async isTabSecret(sessionId: string, hand: string, tabId: string, secret: string): Promise<boolean> {
    return sameSecret(secret, await this.tabSecret(sessionId, hand, tabId));
  }
}

/** The key a program sent (`x-api-key`, or `Authorization: Bearer`, as the official SDK does), or null. */
export function apiKeyOf(headers: Headers): string | null {
  const x = headers.get('x-api-key');
  if (x !== null) return x.trim();
  const m = /^bearer\s+(\S+)\s*$/i.exec(headers.get('authorization') ?? '');
  return m ? m[1]! : null;
}

function sessionCookie(name: string, value: string, maxAge: number, secure: boolean): string {
  return stringifySetCookie({ name, value, httpOnly: true, sameSite: 'lax', secure, path: '/', maxAge });
}

/** Whether the browser reached us over https (directly, or through a proxy that says so). */
export function isHttps(url: string, headers: Headers): boolean {
  return url.startsWith('https:') || headers.get('x-forwarded-proto')?.split(',')[0]?.trim() === 'https';
}
