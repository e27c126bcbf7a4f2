import 'server-only';
import { z } from 'zod';
import { ID_PATTERN } from '~/lib/ids';
import { createTRPCRouter, ownerProcedure } from '~/server/api/trpc';
import { archiveDeployment, createDeployment, deploymentObject, pauseDeployment, runDeploymentNow, unpauseDeployment } from '~/server/commands/deployment-commands';

const DeploymentId = z.string().regex(ID_PATTERN.deployment, 'must be a deployment id (depl_…)');

/**
 * The deployments page: the owner's only (programs use /v1/deployments). The same commands as
 * the REST API; create takes the API's body as it is (the command parses it).
 */
export const deploymentsRouter = createTRPCRouter({
  list: ownerProcedure.query(async ({ ctx }) => {
    const page = await ctx.runtime.deployments.list({ limit: 100, includeArchived: false });
    const now = new Date();
    return page.data.map((d) => deploymentObject(d, now));
  }),
  runs: ownerProcedure.input(z.object({ deploymentId: DeploymentId })).query(({ ctx, input }) => ctx.runtime.deployments.listRuns({ limit: 20, deploymentId: input.deploymentId })),
  create: ownerProcedure.input(z.record(z.string(), z.unknown())).mutation(async ({ ctx, input }) => deploymentObject(await createDeployment(ctx.runtime, input), new Date())),
  pause: ownerProcedure.input(z.object({ id: DeploymentId })).mutation(({ ctx, input }) => pauseDeployment(ctx.runtime, input.id).then(() => null)),
  unpause: ownerProcedure.input(z.object({ id: DeploymentId })).mutation(({ ctx, input }) => unpauseDeployment(ctx.runtime, input.id).then(() => null)),
  archive: ownerProcedure.input(z.object({ id: DeploymentId })).mutation(({ ctx, input }) => archiveDeployment(ctx.runtime, input.id).then(() => null)),
  run: ownerProcedure.input(z.object({ id: DeploymentId })).mutation(({ ctx, input }) => runDeploymentNow(ctx.runtime, input.id)),
});
