// The theme switch in Settings: System follows the device, Light and Dark
// hold whatever the device says, the choice is kept, and it is applied
// before the page is first drawn (so a dark choice never flashes light).
import { test, expect } from '@playwright/test';
import { expectScreen, openApp, runCommand } from '../support/app.mjs';

const CHANGING = ['[data-testid=build]', '[data-testid=storage-usage]', '[data-testid=local-servers]', '.card-meta', 'p.muted > code'];

const background = (page) => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
const LIGHT_BG = 'rgb(250, 248, 245)';
const DARK_BG = 'rgb(23, 21, 19)';

test('System, Light and Dark: chosen in Settings, kept, and applied before the first paint', { tag: '@baseline' }, async ({ page }) => {
  // What the root says the moment the body exists, before anything can
  // have been painted.
  await page.addInitScript(() => {
    new MutationObserver((_, observer) => {
      if (document.body) {
        window.__themeAtBody = document.documentElement.dataset.theme || 'system';
        window.__backgroundAtBody = getComputedStyle(document.documentElement).colorScheme;
        observer.disconnect();
      }
    }).observe(document, { childList: true, subtree: true });
  });
  await page.emulateMedia({ colorScheme: 'light' });
  const errors = await openApp(page);
  await runCommand(page, '/calc 15% of 847');
  await expect(page.locator('.result-card')).toHaveCount(1);
  await page.getByRole('link', { name: 'Settings' }).click();
  const theme = page.getByRole('group', { name: 'Theme' });
  await expect(theme.getByRole('radio', { name: 'System' })).toBeChecked();
  expect(await background(page)).toBe(LIGHT_BG);
  await page.emulateMedia({ colorScheme: 'dark' });
  expect(await background(page)).toBe(DARK_BG);

  // Light holds against a dark device.
  await theme.getByRole('radio', { name: 'Light' }).check();
  expect(await background(page)).toBe(LIGHT_BG);

  // Dark holds against a light device, across a reload, from the start.
  await page.emulateMedia({ colorScheme: 'light' });
  await theme.getByRole('radio', { name: 'Dark' }).check();
  expect(await background(page)).toBe(DARK_BG);
  await page.reload();
  await page.waitForSelector('body[data-ready]');
  expect(await page.evaluate(() => window.__themeAtBody)).toBe('dark');
  expect(await page.evaluate(() => window.__backgroundAtBody)).toBe('dark');
  await expect(page.getByRole('group', { name: 'Theme' }).getByRole('radio', { name: 'Dark' })).toBeChecked();
  expect(await background(page)).toBe(DARK_BG);
  await expectScreen(page, 'theme-dark-settings', { hide: CHANGING });
  await page.getByRole('link', { name: 'Chat' }).click();
  await expect(page.locator('.result-card')).toHaveCount(1);
  await expectScreen(page, 'theme-dark-chat', { hide: CHANGING });

  // System again: the device decides.
  await page.getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('group', { name: 'Theme' }).getByRole('radio', { name: 'System' }).check();
  expect(await background(page)).toBe(LIGHT_BG);
  await page.reload();
  await page.waitForSelector('body[data-ready]');
  expect(await page.evaluate(() => window.__themeAtBody)).toBe('system');
  expect(errors).toEqual([]);
});
