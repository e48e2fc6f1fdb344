// A conversation owns its transcript: the commands run in it are kept with
// it, so clearing the Activity log leaves every chat whole, and export,
// search and Up in the composer all find them. Copy puts an output on the
// clipboard.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import { openApp, runCommand, saveScreenshot } from '../support/app.mjs';

test.use({ permissions: ['clipboard-read', 'clipboard-write'] });

async function run(page, line) {
  const n = await page.locator('.result-card').count();
  await runCommand(page, line);
  await expect(page.locator('.result-card')).toHaveCount(n + 1);
}

/// Picks `format` from the export menu of the conversation titled `title`
/// and returns the downloaded file's text and name.
async function exportAs(page, title, format) {
  const row = page.locator('.conversation', { has: page.locator('.conversation-title', { hasText: title }) });
  await row.hover();
  await row.getByRole('button', { name: `Export ${title}` }).click();
  const menu = row.getByRole('menu', { name: 'Export as' });
  await expect(menu).toBeVisible();
  // The menu takes the keyboard: its first item has the focus.
  await expect(menu.getByRole('menuitem').first()).toBeFocused();
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    menu.getByRole('menuitem', { name: format }).click(),
  ]);
  const file = await download.path();
  await expect(page.locator('.export-status')).toHaveText(`Saved ${download.suggestedFilename()}.`);
  return { name: download.suggestedFilename(), text: fs.readFileSync(file, 'utf8') };
}

test('commands stay in their chat when Activity is cleared; export, search and Up find them', async ({ page }) => {
  const errors = await openApp(page);
  await run(page, '/calc 15% of 847');
  await run(page, '/note Trip ideas #travel');
  await run(page, '/calc days between 2026-01-01 and 2026-12-25');
  const cards = page.locator('.result-card');
  await expect(cards.locator('.card-output')).toHaveText(['127.05', /Created note/, '358 days']);
  // Each card shows the line as it was typed.
  await expect(cards.locator('.card-line')).toHaveText([
    '/calc 15% of 847',
    '/note Trip ideas #travel',
    '/calc days between 2026-01-01 and 2026-12-25',
  ]);

  // Clearing Activity says exactly what goes, and what stays.
  await page.getByRole('link', { name: 'Activity' }).click();
  await page.getByRole('button', { name: 'Clear…' }).click();
  const dialog = page.getByRole('alertdialog', { name: 'Clear the activity log?' });
  await expect(dialog).toContainText('This deletes 3 records of past skill calls');
  await expect(dialog).toContainText('Conversations keep their messages, commands and results');
  await dialog.getByRole('button', { name: 'Clear the log' }).click();
  await expect(page.getByText('The activity log was cleared.')).toBeVisible();

  // The chat is whole, now and after a reload.
  await page.getByRole('link', { name: 'Chat' }).click();
  await expect(cards.locator('.card-output')).toHaveText(['127.05', /Created note/, '358 days']);
  await page.reload();
  await page.waitForSelector('body[data-ready]');
  await expect(cards.locator('.card-output')).toHaveText(['127.05', /Created note/, '358 days']);

  // Search finds what a command returned.
  const search = page.getByRole('searchbox', { name: 'Search conversations' });
  await search.fill('358 days');
  const found = page.locator('.conversation');
  await expect(found).toHaveCount(1);
  await expect(found.locator('.conversation-detail')).toContainText('358 days');
  await search.fill('');

  // Markdown and JSON exports hold every command and its result.
  const title = '/calc 15% of 847';
  const md = await exportAs(page, title, 'Markdown (.md)');
  expect(md.name).toMatch(/\.md$/);
  expect(md.text).toContain('3 messages');
  expect(md.text).toContain('## You ran');
  for (const text of ['/calc 15% of 847', '127.05', '/note Trip ideas #travel', '358 days']) {
    expect(md.text).toContain(text);
  }
  const json = await exportAs(page, title, 'JSON (.json)');
  expect(json.name).toMatch(/\.json$/);
  const stored = JSON.parse(json.text);
  expect(stored.messages.map((m) => [m.role, m.content])).toEqual([
    ['command', '/calc 15% of 847'],
    ['command', '/note Trip ideas #travel'],
    ['command', '/calc days between 2026-01-01 and 2026-12-25'],
  ]);
  expect(stored.messages[0].tool_calls[0].result.content[0].text).toBe('127.05');

  // Up in the empty composer brings back what ran, newest first; Down
  // goes forward again, to an empty line.
  const composer = page.getByRole('textbox', { name: 'Message or command' });
  await composer.focus();
  await composer.press('ArrowUp');
  await expect(composer).toHaveValue('/calc days between 2026-01-01 and 2026-12-25');
  await composer.press('ArrowUp');
  await expect(composer).toHaveValue('/note Trip ideas #travel');
  await composer.press('ArrowDown');
  await composer.press('ArrowDown');
  await expect(composer).toHaveValue('');
  await composer.press('ArrowUp');
  await composer.press('ArrowUp');
  await composer.press('ArrowUp');
  await composer.press('Enter');
  await expect(cards).toHaveCount(4);
  await expect(cards.last().locator('.card-output')).toHaveText('127.05');

  // Copy puts an output on the clipboard, and says so.
  const copy = cards.first().getByRole('button', { name: 'Copy the output' });
  await copy.click();
  await expect(copy).toHaveText('Copied');
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('127.05');

  await saveScreenshot(page, 'chat-transcript');
  expect(errors).toEqual([]);
});

test('a chat title uses the room it has', async ({ page }) => {
  await openApp(page);
  const line = '/note Ideas for the garden party: lanterns, a long table and lemonade';
  await run(page, line);
  // The whole line is the title: nothing cut while there is room for it.
  await expect(page.locator('.chat-title')).toHaveText(line);
  const title = page.locator('.conversation-title').first();
  await expect(title).toHaveText(line);
  const fits = await page.locator('.chat-title').evaluate((el) => el.scrollWidth <= el.clientWidth);
  expect(fits).toBe(true);
});
