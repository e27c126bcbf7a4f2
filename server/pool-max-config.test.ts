import { describe, expect, it } from 'vitest';
import { loadConfig } from '~/server/config';

describe('PADDOCK_POOL_MAX', () => {
  it('caps the warm pool, falls back to PADDOCK_WARM_POOL_MAX, and never sits below PADDOCK_WARM_POOL', () => {
    expect(loadConfig({}).poolMax).toBe(2);
    expect(loadConfig({ PADDOCK_POOL_MAX: '12' }).poolMax).toBe(12);
    expect(loadConfig({ PADDOCK_WARM_POOL_MAX: '6' }).poolMax).toBe(6);
    expect(loadConfig({ PADDOCK_POOL_MAX: '4', PADDOCK_WARM_POOL_MAX: '9' }).poolMax).toBe(4);
    expect(loadConfig({ PADDOCK_WARM_POOL: '5', PADDOCK_POOL_MAX: '1' }).poolMax).toBe(5);
  });

  it('refuses a cap that is not a whole number from 0 to 64, naming the variable', () => {
    for (const bad of ['-1', '65', '2.5', 'many']) expect(() => loadConfig({ PADDOCK_POOL_MAX: bad })).toThrow(/PADDOCK_POOL_MAX/);
  });
});
