/** Seeded random choices for the fuzz suites (tRPC and /v1): the same seed, the same requests. */
export type Rand = () => number;

export const pick = <T,>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

const ULID = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** A well-formed id nobody made (`sesn_…`, `sevt_…`). */
export const fakeId = (r: Rand, prefix: string): string => `${prefix}_${Array.from({ length: 26 }, () => pick(r, ULID.split(''))).join('')}`;
