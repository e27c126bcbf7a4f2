import { type Page, test as base, expect } from '@playwright/test';

/** The owner token and API key every server the e2e suite starts is given. */
export const E2E_OWNER_TOKEN = 'e2e-owner-token-0123456789abcdef';
export const E2E_API_KEY = 'pdk_e2e-api-key-0123456789abcdef';
export const AUTH_ENV = { PADDOCK_OWNER_TOKEN: E2E_OWNER_TOKEN, PADDOCK_API_KEY: E2E_API_KEY } as const;

/** Headers a program (a spec reading the API directly) sends. */
export const PROGRAM_HEADERS = { 'x-api-key': E2E_API_KEY } as const;

/** Signs the page's browser in to the server at `base`, as a person opens the sign-in URL. */
export async function signIn(page: Page, base: string): Promise<void> {
  await page.goto(`${base}/auth/signin?token=${E2E_OWNER_TOKEN}`);
  await expect(page).toHaveURL(`${base}/`);
}

/** Playwright's test, with every page signed in to the spec's server before the test starts. */
export const test = base.extend({
  page: async ({ page, baseURL }, use) => {
    await signIn(page, baseURL!);
    await use(page);
  },
});
export { expect };
