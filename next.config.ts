import type { NextConfig } from 'next';

const config: NextConfig = {
  reactStrictMode: true,
  // Native module: loaded by Node at run time, never bundled.
  serverExternalPackages: ['better-sqlite3'],
  allowedDevOrigins: ['127.0.0.1'],
  poweredByHeader: false,
};

export default config;
