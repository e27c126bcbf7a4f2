// Paddock runs on maintained Node.js lines only (its dependencies need ^22.13 or >= 24): stop at once with a clear message otherwise.
import { pathToFileURL } from 'node:url';

export const SUPPORTED_NODE = '^22.13.0 || >=24';

/** The reason this Node version cannot run Paddock, or null when it can. */
export function unsupportedNodeMessage(version) {
  const [major, minor] = version.replace(/^v/, '').split('.').map(Number);
  if (major >= 24 || (major === 22 && minor >= 13)) return null;
  return [
    `paddock: Node.js ${version.replace(/^v/, '')} cannot run Paddock; it needs Node.js 22 (22.13 or newer) or 24.`,
    `  ./paddock start   fetches Node 22 from the npm registry and starts Paddock on it,`,
    `  or install Node.js 22 or 24 (https://nodejs.org) and run npm start again.`,
  ].join('\n');
}

export function exitUnlessSupported(version = process.versions.node) {
  const message = unsupportedNodeMessage(version);
  if (message) {
    console.error(message);
    process.exit(1);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) exitUnlessSupported();
