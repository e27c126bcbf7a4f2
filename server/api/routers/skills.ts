import 'server-only';
import { z } from 'zod';
import { ID_PATTERN } from '~/lib/ids';
import { createTRPCRouter, ownerProcedure } from '~/server/api/trpc';
import { createSkill, deleteSkill } from '~/server/commands/skill-commands';
import { MAX_SKILL_FILES } from '~/server/skills/skill-bundle';

const SkillId = z.string().regex(ID_PATTERN.skill, 'must be a skill id (skill_…)');

/**
 * The skills page: the owner's only (programs use /v1/skills). An upload comes as base64 in JSON,
 * so it is capped by the request body limit (PADDOCK_MAX_BODY_BYTES): a skill is small text.
 */
export const skillsRouter = createTRPCRouter({
  list: ownerProcedure.query(({ ctx }) => ctx.runtime.skills.list({ limit: 100 })),
  versions: ownerProcedure.input(z.object({ skillId: SkillId })).query(({ ctx, input }) => ctx.runtime.skills.listVersions(input.skillId, { limit: 100 })),
  upload: ownerProcedure
    .input(
      z.object({
        displayName: z.string().max(255).optional(),
        files: z
          .array(z.object({ path: z.string().min(1).max(1024), base64: z.string().max(16 * 1024 * 1024) }))
          .min(1)
          .max(MAX_SKILL_FILES),
      }),
    )
    .mutation(({ ctx, input }) =>
      createSkill(
        { skills: ctx.runtime.skills, blobs: ctx.runtime.blobs },
        input.files.map((f) => ({ name: f.path, data: Buffer.from(f.base64, 'base64') })),
        input.displayName?.trim() ? input.displayName.trim() : null,
      ),
    ),
  delete: ownerProcedure.input(z.object({ id: SkillId })).mutation(({ ctx, input }) => deleteSkill({ skills: ctx.runtime.skills, blobs: ctx.runtime.blobs }, input.id)),
});
