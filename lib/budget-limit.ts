import { z } from 'zod';

/**
 * A spend ceiling at list prices (the Managed Agents API's `budget`): the cap fires at or before
 * the actual charge. Amounts are minor units (cents) as an integer decimal string, never a float.
 */
export const BudgetLimit = z
  .object({
    type: z.literal('limit'),
    max_list_cost: z
      .object({
        amount: z.string().regex(/^(0|[1-9][0-9]{0,11})$/, 'must be an integer number of minor units (cents) as a string, e.g. "2500"'),
        currency: z.literal('USD', { error: 'only USD is priced' }),
      })
      .strict(),
  })
  .strict();
export type BudgetLimit = z.infer<typeof BudgetLimit>;
