// The foundation's journey: a skill run from the command bar, persisted.
import { test, expect } from '@playwright/test';
import { expectScreen, openApp, runCommand, saveScreenshot } from '../support/app.mjs';

test('/calc 15% of 847 shows 127.05, and the card survives a reload', async ({ page }) => {
  const errors = await openApp(page);
  await expect(page.getByRole('heading', { name: 'Run a skill' })).toBeVisible();

  await runCommand(page, '/calc 15% of 847');
  const card = page.locator('.result-card').first();
  await expect(card.locator('.card-output')).toHaveText('127.05');
  await expect(card.locator('.card-skill')).toHaveText('Calculator');
  await expect(card.locator('.card-input')).toHaveText('/calc 15% of 847');
  await expect(card.locator('.card-duration')).toContainText('ms');
  await expect(card).toHaveAttribute('data-status', 'completed');

  await page.reload();
  await page.waitForSelector('body[data-ready]');
  await expect(page.locator('.result-card .card-output')).toHaveText(['127.05']);

  await saveScreenshot(page, 'chat-calculator');
  expect(errors).toEqual([]);
});

test('bad input gives clear errors and never breaks the app', async ({ page }) => {
  const errors = await openApp(page);

  await runCommand(page, '/calx 2+2');
  await expect(page.getByRole('alert')).toHaveText('unknown command /calx. Did you mean /calculator?');
  // The typed line stays so it can be fixed.
  await expect(page.getByRole('textbox', { name: 'Message or command' })).toHaveValue('/calx 2+2');

  await runCommand(page, '/calc 1/0');
  const failed = page.locator('.result-card[data-status="failed"]');
  await expect(failed.locator('.card-output')).toHaveText("cannot calculate '1/0': division by zero");

  await runCommand(page, '/calc 2+2');
  await expect(page.locator('.result-card[data-status="completed"] .card-output')).toHaveText('4');
  expect(errors).toEqual([]);
});

test('dates: differences in the forms people type, and a date is never a silent number', async ({ page }) => {
  const errors = await openApp(page);
  const out = page.locator('.result-card .card-output');
  for (const [line, answer] of [
    ['/calc 2026-12-25 - 2026-01-01', '358 days'],
    ['/calc days between 2026-01-01 and 2026-12-25', '358 days'],
    ['/calc from 1 January 2026 to December 25, 2026', '358 days'],
    ['/calc weeks between 2026-01-01 and 2026-12-25', '51 weeks and 1 day'],
    ['/calc 2026-12-25 + 5 days', 'Wednesday, 30 December 2026'],
  ]) {
    const n = await out.count();
    await runCommand(page, line);
    await expect(out).toHaveCount(n + 1);
    await expect(out.last()).toHaveText(answer);
  }
  await runCommand(page, '/calc 2026-12-25 * 2');
  const failed = page.locator('.result-card[data-status="failed"] .card-output');
  await expect(failed).toContainText('2026-12-25 is a date, and here it is used as a number');
  expect(errors).toEqual([]);
});

test('the composer completes commands from the keyboard', async ({ page }) => {
  await openApp(page);
  const composer = page.getByRole('textbox', { name: 'Message or command' });
  await composer.fill('/ca');
  await expect(page.getByRole('listbox', { name: 'Skills' })).toContainText('/calculator');
  await composer.press('Tab');
  await expect(composer).toHaveValue('/calculator ');
  await composer.pressSequentially('5 miles to km');
  await composer.press('Enter');
  await expect(page.locator('.result-card .card-output')).toHaveText('8.04672 km');
});

test('skills are grouped by tier and settings shows version and storage', { tag: '@baseline' }, async ({ page }) => {
  await openApp(page, 'skills');
  await expect(page.getByRole('heading', { name: 'Skills', level: 1 })).toBeVisible();
  const core = page.locator('section.tier[data-tier="core"]');
  await expect(core.locator('.skill[data-skill="calculator"]')).toContainText('Evaluate math');
  await expectScreen(page, 'skills');

  await page.getByRole('link', { name: 'Settings' }).click();
  await expect(page.getByTestId('version')).toHaveText(/^\d+\.\d+\.\d+$/);
  await expect(page.getByTestId('storage-usage')).toContainText('available');
  // The build id and the storage figures differ from build to build; the
  // look for local model servers says when it was made and what answered
  // on this machine.
  await expect(page.getByTestId('local-servers')).toContainText('when Hearth last looked');
  await expectScreen(page, 'settings', { hide: ['[data-testid=build]', '[data-testid=storage-usage]', '[data-testid=local-servers]'] });
});

test('clear all data asks first, and Cancel keeps everything', async ({ page }) => {
  await openApp(page);
  await runCommand(page, '/calc 1+1');
  await expect(page.locator('.result-card')).toHaveCount(1);

  await page.getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('button', { name: 'Clear all data…' }).click();
  const dialog = page.getByRole('alertdialog', { name: 'Delete all data?' });
  await expect(dialog).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await page.getByRole('link', { name: 'Chat' }).click();
  await expect(page.locator('.result-card')).toHaveCount(1);

  await page.getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('button', { name: 'Clear all data…' }).click();
  await page.getByRole('button', { name: 'Delete everything' }).click();
  await expect(page.getByRole('status')).toHaveText('All data was deleted.');
  await page.getByRole('link', { name: 'Chat' }).click();
  await expect(page.locator('.result-card')).toHaveCount(0);
  await page.reload();
  await page.waitForSelector('body[data-ready]');
  await expect(page.locator('.result-card')).toHaveCount(0);
});
