// Every panel, with content in it, at a desktop width and a phone width,
// compared with the committed baselines (see e2e/support/screens.mjs): a
// moved, resized, recoloured, missing or added element fails the journey.
// Times, durations and the per-run config folder's name differ from run
// to run and are hidden.
import { test, expect } from '@playwright/test';
import { expectScreen, openApp, runCommand } from '../support/app.mjs';

const PANELS = ['chat', 'notes', 'tasks', 'memory', 'skills', 'servers', 'activity', 'settings'];
const CHANGING = [
  '[data-testid=build]',
  '[data-testid=storage-usage]',
  '[data-testid=local-servers]',
  'tr.log-row td:nth-child(1)',
  'tr.log-row td:nth-child(5)',
  '.log-row .when',
  '.log-row .duration',
  '.card-meta',
  '.conversation-detail',
  'p.muted > code',
];

async function run(page, line) {
  const n = await page.locator('.result-card').count();
  await runCommand(page, line);
  await expect(page.locator('.result-card')).toHaveCount(n + 1);
}

for (const [width, height] of [[1280, 820], [390, 844]]) {
  test(`every panel with content at ${width} px`, { tag: '@baseline' }, async ({ page }) => {
    test.setTimeout(120_000);
    await page.setViewportSize({ width, height });
    const errors = await openApp(page);
    await run(page, '/calc 15% of 847');
    await run(page, '/note Groceries #home\nmilk and eggs');
    await run(page, '/task Renew the passport !high');
    await run(page, '/remember I prefer metric units');
    for (const panel of PANELS) {
      await page.goto(`/#/${panel}`);
      await expect(page.locator('main h1, main h2').first()).toBeVisible();
      await expectScreen(page, `panel-${panel}-${width}`, { hide: CHANGING });
    }
    expect(errors).toEqual([]);
  });
}
