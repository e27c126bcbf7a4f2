import os from 'node:os';
import { deniedAddressClass, sameAddress } from '~/lib/ip-address';

// No 'server-only' here: the sandbox launcher (a plain Node process, outside Next's react-server
// conditions) imports this through runtime-config.ts for its egress rule.

/** This machine's interface addresses (read each time: an address may come and go with DHCP or a VPN). */
export function hostAddresses(): string[] {
  return Object.values(os.networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address));
}

/** Why no connection on someone's behalf may go to this address, or null when it may. */
export function refusedAddressClass(address: string, own: readonly string[] = hostAddresses()): string | null {
  return deniedAddressClass(address) ?? (own.some((a) => sameAddress(a, address)) ? 'an address of this host' : null);
}
