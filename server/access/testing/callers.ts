import type { Caller } from '~/server/access/access';

/** The signed-in owner, for tests that call procedures directly (createCaller). */
export const OWNER: Caller = { kind: 'owner', session: 'test-owner-session' };
export const PROGRAM: Caller = { kind: 'api_key', keyId: 'configured' };
