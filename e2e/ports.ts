/**
 * The ports of one e2e stack (its fake Messages API, app servers, and the specs' own servers).
 * E2E_PORT_OFFSET moves the whole block, so a second stack (another worktree, with its own
 * E2E_DATA_DIR) can run beside the first without meeting it.
 */
const OFFSET = Number(process.env.E2E_PORT_OFFSET ?? 0);

/** A spec's own port (its private server, proxy or docs site), moved with the stack. */
export const port = (base: number): number => base + OFFSET;

export const PORTS = { app: port(3210), demo: port(3211), fake: port(4010) } as const;

export const FAKE_URL = `http://127.0.0.1:${PORTS.fake}`;
export const APP_URL = `http://127.0.0.1:${PORTS.app}`;
export const DEMO_URL = `http://127.0.0.1:${PORTS.demo}`;
