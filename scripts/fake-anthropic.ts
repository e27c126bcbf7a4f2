/**
 * Standalone fake Anthropic Messages API for e2e tests:
 *   npx tsx scripts/fake-anthropic.ts --port 4010 [--require-key KEY]
 * Point the app at it with ANTHROPIC_BASE_URL. Script it over HTTP:
 *   POST /_control/enqueue (a ScriptedResponse or an array), POST /_control/reset, GET /_control/requests.
 * Unscripted requests get "echo: <last user message>" so a browser test that scripts nothing still gets an answer.
 */
import { parseArgs } from 'node:util';
import { echoFallback, startFakeMessagesApi } from '~/server/harness/testing/fake-messages-api';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '4010' },
    'require-key': { type: 'string' },
  },
});

const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`fake-anthropic: invalid --port ${values.port}`);
  process.exit(2);
}

const fake = await startFakeMessagesApi({
  port,
  control: true,
  fallback: echoFallback,
  ...(values['require-key'] === undefined ? {} : { requireKey: values['require-key'] }),
});
console.log(`fake-anthropic listening on ${fake.url}`);

const stop = (): void => {
  void fake.close().then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
