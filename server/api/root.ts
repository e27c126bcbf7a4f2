import 'server-only';
import { agentsRouter } from '~/server/api/routers/agents';
import { apiKeysRouter } from '~/server/api/routers/api-keys';
import { environmentsRouter } from '~/server/api/routers/environments';
import { eventsRouter } from '~/server/api/routers/events';
import { filesRouter } from '~/server/api/routers/files';
import { handsRouter } from '~/server/api/routers/hands';
import { memoryStoresRouter } from '~/server/api/routers/memory-stores';
import { outcomesRouter } from '~/server/api/routers/outcomes';
import { sessionsRouter } from '~/server/api/routers/sessions';
import { skillsRouter } from '~/server/api/routers/skills';
import { sharesRouter } from '~/server/api/routers/shares';
import { vaultsRouter } from '~/server/api/routers/vaults';
import { widgetRouter } from '~/server/api/routers/widget';
import { widgetsRouter } from '~/server/api/routers/widgets';
import { deploymentsRouter } from '~/server/api/routers/deployments';
import { webhooksRouter } from '~/server/api/routers/webhooks';
import { createCallerFactory, createTRPCRouter } from '~/server/api/trpc';

export const appRouter = createTRPCRouter({
  sessions: sessionsRouter,
  events: eventsRouter,
  outcomes: outcomesRouter,
  hands: handsRouter,
  apiKeys: apiKeysRouter,
  agents: agentsRouter,
  environments: environmentsRouter,
  vaults: vaultsRouter,
  files: filesRouter,
  memoryStores: memoryStoresRouter,
  skills: skillsRouter,
  shares: sharesRouter,
  widget: widgetRouter,
  widgets: widgetsRouter,
  deployments: deploymentsRouter,
  webhooks: webhooksRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
