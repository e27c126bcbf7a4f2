/**
 * A vault's `environment_variable` credential as a sandbox hand's egress proxy needs it. The hand
 * itself never holds `value`: its environment gets a placeholder under `name`, and the proxy (in
 * the hand's launcher, outside the sandbox) puts `value` where the placeholder appears in a
 * request to one of `hosts` — in headers when `header`, in bodies when `body` — and nowhere else.
 *
 * The shape is the hands' side of a contract with the vault (`VaultSecrets.handSecrets` makes
 * them); the registry is handed a loader and never decrypts anything itself.
 */
export interface HandSecret {
  /** The variable name in the hand's environment (`secret_name`). */
  name: string;
  value: string;
  /**
   * Where it may be sent: exact names, `*.example.com`, IP literals, each with an optional `:port`
   * (none means 443 only); `['*']` for unrestricted networking (any host, on 443).
   */
  hosts: string[];
  header: boolean;
  /** The request headers it may go in (lower-case), when `header`; `['authorization']` when absent. */
  headerNames?: string[];
  body: boolean;
}

/** A session's secrets, read (and decrypted) afresh on each call: a hand started later gets an updated value. */
export type HandSecretLoader = () => Promise<HandSecret[]>;

/** What the launcher reads as the first line on its stdin when `SECRETS_ON_STDIN_ENV` is set. */
export interface SecretsLine {
  secrets: HandSecret[];
}

/** The line a launcher reads first on its stdin (see `SECRETS_ON_STDIN_ENV`). */
export function secretsLine(secrets: readonly HandSecret[]): string {
  const line: SecretsLine = { secrets: [...secrets] };
  return `${JSON.stringify(line)}\n`;
}

/** Set (to `1`) in the launcher's environment when a secrets line comes first on its stdin. */
export const SECRETS_ON_STDIN_ENV = 'PADDOCK_SANDBOX_SECRETS_ON_STDIN';

/** Checks a secrets line received by the launcher; throws naming what is wrong (never a value). */
export function parseSecretsLine(line: string): HandSecret[] {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    throw new Error('the secrets line is not valid JSON');
  }
  const list = (raw as Partial<SecretsLine> | null)?.secrets;
  if (!Array.isArray(list)) throw new Error('the secrets line has no "secrets" array');
  return list.map((s: Partial<HandSecret>, i) => {
    const ok =
      typeof s.name === 'string' &&
      /^[A-Za-z_][A-Za-z0-9_]*$/.test(s.name) &&
      typeof s.value === 'string' &&
      Array.isArray(s.hosts) &&
      s.hosts.every((h) => typeof h === 'string' && h.length > 0) &&
      typeof s.header === 'boolean' &&
      (s.headerNames === undefined || (Array.isArray(s.headerNames) && s.headerNames.every((h) => typeof h === 'string' && /^[a-z0-9!#$%&'*+.^_`|~-]+$/.test(h)))) &&
      typeof s.body === 'boolean';
    if (!ok) throw new Error(`secret ${i} is malformed`);
    return s as HandSecret;
  });
}

/**
 * Names of further variables paddock-hand passes to the commands it runs (comma-separated): the
 * hand's secrets, whose values there are placeholders its egress proxy swaps for the real ones.
 */
export const PASS_ENV_ENV = 'PADDOCK_HAND_PASS_ENV';
