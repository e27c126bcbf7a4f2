/**
 * The ports of one e2e stack. scripts/e2e.sh runs the specs in two shards at once, each with its
 * own fake Messages API, app servers and data directory; E2E_PORT_OFFSET moves the second shard's
 * whole block of ports (the stacks never meet).
 */
const OFFSET = Number(process.env.E2E_PORT_OFFSET ?? 0);

/** A spec's own port (its private server, proxy or docs site), moved with its shard. */
export const port = (base: number): number => base + OFFSET;

export const PORTS = { app: port(3210), demo: port(3211), fake: port(4010) } as const;

export const FAKE_URL = `http://127.0.0.1:${PORTS.fake}`;
export const APP_URL = `http://127.0.0.1:${PORTS.app}`;
export const DEMO_URL = `http://127.0.0.1:${PORTS.demo}`;
