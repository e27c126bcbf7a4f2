/**
 * A share link's token: `pds_` + 256 random bits (base64url), and, for a link that expires, `.`
 * + its expiry (epoch ms, base 36). Only the token's SHA-256 is stored; the expiry in it lets the
 * request guard answer 410 for an expired link without reading the database (a token whose
 * expiry was edited is another token: its hash matches no row, and the page answers 404).
 */
export const SHARE_TOKEN_PREFIX = 'pds_';
const SHAPE = /^pds_[\w-]{43}(?:\.([0-9a-z]{1,12}))?$/;

/** Whether a string could be a share token at all (cheap, before any lookup). */
export function isShareTokenShape(token: string): boolean {
  return SHAPE.test(token);
}

/** The expiry a token carries (epoch ms), null when it never expires or is no token. */
export function shareTokenExpiry(token: string): number | null {
  const m = SHAPE.exec(token);
  return m?.[1] ? parseInt(m[1], 36) : null;
}

/** The token a `/share/<token>` path names, or null. */
export function shareTokenOfPath(pathname: string): string | null {
  const m = /^\/share\/([^/]+)\/?$/.exec(pathname);
  return m ? decodeURIComponent(m[1]!) : null;
}

/** The header the share page's API requests carry the token in (subscriptions: connection param `share`). */
export const SHARE_HEADER = 'x-paddock-share';
