/**
 * IP literals and the address classes a fetch on someone's behalf must not reach (SSRF): loopback,
 * private, link-local, unique-local, multicast, unspecified and reserved space, IPv4 and IPv6,
 * including IPv6 forms that carry an IPv4 address (v4-mapped, v4-compatible, NAT64, 6to4), which
 * are judged by the IPv4 address they deliver to. Pure, so the web_fetch tool and the sandbox
 * launcher decide alike.
 */

/** The four bytes of a dotted-quad IPv4 literal (`127.0.0.1`), or null. */
export function parseIPv4(s: string): number[] | null {
  const parts = s.split('.');
  if (parts.length !== 4) return null;
  const bytes = parts.map((p) => (/^(0|[1-9]\d{0,2})$/.test(p) ? Number(p) : NaN));
  return bytes.every((b) => b >= 0 && b <= 255) ? bytes : null;
}

/** The sixteen bytes of an IPv6 literal (brackets and a `%zone` allowed), or null. */
export function parseIPv6(input: string): number[] | null {
  let s = input.startsWith('[') && input.endsWith(']') ? input.slice(1, -1) : input;
  s = s.replace(/%.*$/, '');
  if (!s.includes(':')) return null;
  // A dotted IPv4 tail (`::ffff:127.0.0.1`) is two groups.
  const lastColon = s.lastIndexOf(':');
  const tail = s.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = parseIPv4(tail);
    if (!v4) return null;
    s = `${s.slice(0, lastColon + 1)}${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const groups = (h: string) => (h === '' ? [] : h.split(':'));
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  const fill = 8 - head.length - rest.length;
  if (halves.length === 2 ? fill < 1 : head.length !== 8) return null;
  const all = [...head, ...Array<string>(halves.length === 2 ? fill : 0).fill('0'), ...rest];
  const bytes: number[] = [];
  for (const g of all) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    const n = parseInt(g, 16);
    bytes.push(n >> 8, n & 0xff);
  }
  return bytes;
}

/** Whether `s` is an IP literal (IPv4 dotted quad, or IPv6 with or without brackets). */
export function isIpLiteral(s: string): boolean {
  return parseIPv4(s) !== null || parseIPv6(s) !== null;
}

type Range = readonly [prefix: number[], bits: number, what: string];

const V4_DENIED: readonly Range[] = [
  [[0, 0, 0, 0], 8, 'an unspecified address'],
  [[10, 0, 0, 0], 8, 'a private address'],
  [[100, 64, 0, 0], 10, 'a private address'], // shared address space (carrier-grade NAT)
  [[127, 0, 0, 0], 8, 'a loopback address'],
  [[169, 254, 0, 0], 16, 'a link-local address'], // incl. cloud instance metadata
  [[172, 16, 0, 0], 12, 'a private address'],
  [[192, 0, 0, 0], 24, 'a reserved address'], // IETF protocol assignments
  [[192, 168, 0, 0], 16, 'a private address'],
  [[198, 18, 0, 0], 15, 'a reserved address'], // benchmarking
  [[224, 0, 0, 0], 4, 'a multicast address'],
  [[240, 0, 0, 0], 4, 'a reserved address'], // incl. the broadcast address
];

const V6_DENIED: readonly Range[] = [
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], 128, 'a loopback address'],
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 128, 'an unspecified address'],
  [[0xfc], 7, 'a unique-local address'],
  [[0xfe, 0x80], 10, 'a link-local address'],
  [[0xfe, 0xc0], 10, 'a reserved address'], // deprecated site-local
  [[0xff], 8, 'a multicast address'],
];

/** As CIDR text, for configurations that take ranges (the sandbox's resolved-address guard). */
export const DENIED_RANGES: readonly string[] = [
  ...V4_DENIED.map(([p, bits]) => `${p.join('.')}/${bits}`),
  '::1/128',
  '::/128',
  'fc00::/7',
  'fe80::/10',
  'fec0::/10',
  'ff00::/8',
];

function inRange(bytes: readonly number[], [prefix, bits]: Range): boolean {
  for (let i = 0; i < bits; i += 8) {
    const take = Math.min(8, bits - i);
    const mask = (0xff << (8 - take)) & 0xff;
    if (((bytes[i / 8] ?? 0) & mask) !== ((prefix[i / 8] ?? 0) & mask)) return false;
  }
  return true;
}

/** The IPv4 address an IPv6 address delivers to, when it carries one. */
function embeddedIPv4(b: readonly number[]): number[] | null {
  const zeros = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated; not :: or ::1)
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return b.slice(12);
  if (zeros(0, 12) && !zeros(12, 15)) return b.slice(12);
  // 64:ff9b::/96 (NAT64)
  if (b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(4, 12)) return b.slice(12);
  // 2002:aabb:ccdd::/48 (6to4)
  if (b[0] === 0x20 && b[1] === 0x02) return b.slice(2, 6);
  return null;
}

/**
 * Why no fetch on someone's behalf may connect to this address (`"a loopback address"`, …), or
 * null when it is public. Anything that is not an IP literal is refused as unparsable.
 */
export function deniedAddressClass(address: string): string | null {
  const v4 = parseIPv4(address);
  if (v4) return V4_DENIED.find((r) => inRange(v4, r))?.[2] ?? null;
  const v6 = parseIPv6(address);
  if (!v6) return 'an unparsable address';
  const carried = embeddedIPv4(v6);
  if (carried) {
    const why = V4_DENIED.find((r) => inRange(carried, r))?.[2];
    if (why) return why;
  }
  return V6_DENIED.find((r) => inRange(v6, r))?.[2] ?? null;
}

/**
 * Whether two IP literals name the same address (`127.0.0.1` and `::ffff:127.0.0.1` do; so do
 * two spellings of one IPv6 address). Anything that is not an IP literal matches nothing.
 */
export function sameAddress(a: string, b: string): boolean {
  const x = canonical(a);
  const y = canonical(b);
  return x !== null && y !== null && x.length === y.length && x.every((v, i) => v === y[i]);
}

/** An address as the IPv4 address it delivers to (when it carries one), else its sixteen bytes. */
function canonical(s: string): number[] | null {
  const v4 = parseIPv4(s);
  if (v4) return v4;
  const v6 = parseIPv6(s);
  if (!v6) return null;
  return embeddedIPv4(v6) ?? v6;
}
