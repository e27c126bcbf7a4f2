// Stands in for `server-only` under Vitest and tsx (see vitest.config.ts).
export {};
