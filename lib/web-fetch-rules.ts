import { ToolError } from '~/lib/hand';
import { type NetworkPolicy, networkAllows } from '~/lib/network-policy';
import type { ToolConfig } from '~/lib/toolset';

/**
 * The web_fetch tool's rules that need no network: which URLs it takes, what its config's domain
 * lists and the session's network policy say about a host, and how much content the model gets.
 * Each refusal is a `ToolError` whose text tells the model what is wrong and what would do.
 */

/** The content a result carries when the config sets no `max_content_tokens`. */
export const DEFAULT_MAX_CONTENT_TOKENS = 25_000;
/** Tokens are estimated as characters / 4. */
const CHARS_PER_TOKEN = 4;

/** The URL as the tool fetches it: http or https, no credentials. */
export function parseFetchUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new ToolError(`web_fetch: not a URL: ${JSON.stringify(raw.slice(0, 200))} (give an absolute http or https URL)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ToolError(`web_fetch: only http and https URLs are fetched, not ${url.protocol.replace(/:$/, '')}`);
  if (url.username || url.password) throw new ToolError('web_fetch: a URL with credentials (user:password@) is not fetched');
  url.hash = '';
  return url;
}

/** The port a URL connects to. */
export function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

/** The host as the policies compare it: lower case, an IPv6 literal without brackets. */
export function hostOf(url: URL): string {
  const h = url.hostname.toLowerCase();
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

/** The tool config's domain rule: the host is the entry or a subdomain of it. */
export function domainCovers(host: string, domain: string): boolean {
  const d = domain.toLowerCase().replace(/\.$/, '');
  const h = host.toLowerCase().replace(/\.$/, '');
  return h === d || h.endsWith(`.${d}`);
}

/** Refuses a host the tool's own `allowed_domains` / `blocked_domains` rule out. */
export function checkToolDomains(config: ToolConfig | null, host: string): void {
  const allowed = config?.allowed_domains;
  if (allowed && !allowed.some((d) => domainCovers(host, d))) {
    throw new ToolError(`web_fetch: ${host} is not in this agent's web_fetch allowed_domains (${allowed.join(', ')})`);
  }
  const blocked = config?.blocked_domains?.find((d) => domainCovers(host, d));
  if (blocked) throw new ToolError(`web_fetch: ${host} is blocked by this agent's web_fetch blocked_domains (${blocked})`);
}

/**
 * Refuses a host the session's network policy does not let through; else says whether it is
 * listed by exact name or address (which alone lets it resolve to a private address).
 */
export function checkNetworkPolicy(policy: NetworkPolicy, url: URL): { explicit: boolean } {
  const host = hostOf(url);
  const { allowed, explicit } = networkAllows(policy, host, portOf(url));
  if (!allowed) {
    throw new ToolError(
      `web_fetch: ${host} is not a host this session may reach: add it to the environment's allowed_hosts (limited networking), or to the session's allowed_domains metadata`,
    );
  }
  return { explicit };
}

/** The content as the model gets it: at most `max_content_tokens` (≈ 4 characters each), saying when cut. */
export function truncateContent(text: string, maxTokens: number | null | undefined): string {
  const tokens = maxTokens ?? DEFAULT_MAX_CONTENT_TOKENS;
  const max = tokens * CHARS_PER_TOKEN;
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n\n[truncated: the content is ${text.length} characters; only the first ${max} are shown (max_content_tokens ${tokens})]`;
}
