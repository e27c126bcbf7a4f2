import { healthAnswer } from '~/server/health';

export const dynamic = 'force-dynamic';

/** `GET /healthz`: for probes and for `npm start` (is Paddock already on this port?); no sign-in. */
export function GET(): Response {
  return healthAnswer();
}
