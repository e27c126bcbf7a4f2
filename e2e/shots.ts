import type { Page } from '@playwright/test';

/** Screenshots for a person to look at (not compared): the pages at desktop and phone width. */
const SHOTS = process.env.E2E_SHOTS_DIR ?? '/tmp/shots';
const WIDTHS = [1280, 390] as const;

export async function shoot(page: Page, name: string, widths: readonly number[] = WIDTHS): Promise<void> {
  const size = page.viewportSize();
  for (const width of widths) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    await page.screenshot({ path: `${SHOTS}/${name}-${width}.png`, fullPage: true });
  }
  if (size) await page.setViewportSize(size);
}
