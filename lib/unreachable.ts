/** Exhaustiveness guard for discriminated unions: the compiler proves this is never called. */
export function unreachable(x: never): never {
  throw new Error(`unreachable: ${JSON.stringify(x)}`);
}
