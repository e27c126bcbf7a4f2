import 'server-only';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { type MasterKey, type Sealed, open, seal } from '~/server/vault/envelope';
import { webhookKeyContext } from '~/server/vault/seal-contexts';

/**
 * Webhook endpoints' signing secrets: made here, shown once (at creation), kept sealed under the
 * master key (bound to their endpoint), and opened only here to sign a delivery per Standard
 * Webhooks, the scheme the SDK's `webhooks.unwrap()` verifies.
 */
const context = webhookKeyContext;

export class WebhookKeys {
  constructor(private readonly master: MasterKey) {}

  /** A new secret for `endpointId`, and it sealed (what is stored). */
  create(endpointId: string): { secret: string; sealed: string } {
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    return { secret, sealed: JSON.stringify(seal(this.master, secret, context(endpointId))) };
  }

  /** The Standard Webhooks headers of one delivery attempt (`webhook-id`, `-timestamp`, `-signature`). */
  sign(sealed: string, endpointId: string, msgId: string, at: Date, body: string): Record<string, string> {
    const secret = open(this.master, JSON.parse(sealed) as Sealed, context(endpointId));
    const signature = new Webhook(secret).sign(msgId, at, body);
    return { 'webhook-id': msgId, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature };
  }
}
