import type { Metadata } from 'next';
import { ApiKeys } from '~/app/_components/settings/api-keys';
import { SignOut } from '~/app/_components/settings/sign-out';
import { VaultsSection } from '~/app/_components/vaults/vaults-section';
import { WebhooksSection } from '~/app/_components/settings/webhooks-section';

export const metadata: Metadata = { title: 'Settings · Paddock' };

export default function SettingsPage() {
  return (
    <main className="page settings">
      <h1>Settings</h1>
      <ApiKeys />
      <VaultsSection />
      <WebhooksSection />
      <section>
        <h2>This browser</h2>
        <p className="muted">Signed in as the owner. Signing out ends this sign-in on every Paddock instance and clears this browser&apos;s offline copy.</p>
        <SignOut />
      </section>
    </main>
  );
}
