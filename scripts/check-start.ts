/**
 * `npm start` runs this before it builds or binds the port (scripts/start.mjs): a bad setting, an
 * unwritable data dir or a port in use ends here in one line on stderr and exit code 2. Run as
 * `node --conditions=react-server --import tsx scripts/check-start.ts`.
 */
import nextEnv from '@next/env';
import { startProblem } from '~/server/start-check';

// The same .env files `next start` reads, so the check sees the settings the server will.
nextEnv.loadEnvConfig(process.cwd(), false, { info: () => {}, error: () => {} });
const problem = await startProblem(process.env);
if (problem) {
  process.stderr.write(`${problem}\n`);
  process.exit(2);
}
