// An accessibility audit with axe-core of every panel and dialog, in the
// light and the dark theme: no serious or critical violations.
import { test, expect } from '@playwright/test';
import { openApp, runCommand, saveScreenshot } from '../support/app.mjs';
import { seriousViolations } from '../support/a11y.mjs';
import { requirePeers, startEverything } from '../support/mcp.mjs';
import { say, startFakeModel, useProvider } from '../support/model.mjs';

const THEMES = ['light', 'dark'];
const PANELS = ['chat', 'notes', 'tasks', 'memory', 'skills', 'servers', 'activity', 'settings'];

/// Audits what is on screen in both themes; returns every finding keyed by
/// where it was found.
async function audit(page, where, found) {
  for (const theme of THEMES) {
    await page.emulateMedia({ colorScheme: theme });
    // Let transitions and colour changes settle.
    await page.waitForTimeout(120);
    const v = await seriousViolations(page);
    if (v.length) found[`${where} (${theme})`] = v;
    // Kept with the other screenshots, to look at both themes.
    await saveScreenshot(page, `a11y-${where.replace(/[^a-z0-9]+/gi, '-')}-${theme}`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

/// Runs a line and waits for its card.
async function run(page, line) {
  const n = await page.locator('.result-card').count();
  await runCommand(page, line);
  await expect(page.locator('.result-card')).toHaveCount(n + 1);
}

test('every panel and dialog passes axe in both themes', async ({ page }) => {
  test.setTimeout(180_000);
  const found = {};
  await openApp(page);
  await audit(page, 'chat, empty', found);

  // Content on every panel: cards of each status, a note, a task, a memory.
  await run(page, '/calc 15% of 847');
  await run(page, '/calc 1/0');
  await run(page, '/note Groceries #home\nmilk and eggs');
  await run(page, '/task Renew passport tomorrow !high');
  await run(page, '/remember I prefer metric units');
  await page.getByRole('link', { name: 'Skills' }).click();
  await page.getByRole('combobox', { name: 'Approval for Calculator' }).selectOption('never-allow');
  await page.getByRole('link', { name: 'Chat' }).click();
  // The conversation's cards are back before the next one is counted.
  await expect(page.locator('.result-card')).toHaveCount(5);
  await run(page, '/calc 2+2');

  // The help panel and the suggestions.
  await runCommand(page, '/help notes');
  await expect(page.getByRole('region', { name: 'Help: Notes' })).toBeVisible();
  await page.getByRole('textbox', { name: 'Message or command' }).fill('/no');
  await audit(page, 'chat with cards, help and suggestions', found);
  await page.getByRole('textbox', { name: 'Message or command' }).fill('');

  // The skill form.
  await page.getByRole('textbox', { name: 'Message or command' }).fill('jot down an idea');
  await page.getByRole('textbox', { name: 'Message or command' }).press('Enter');
  await expect(page.getByRole('dialog', { name: 'Notes' })).toBeVisible();
  await page.getByRole('dialog', { name: 'Notes' }).getByLabel('What to do').selectOption('list');
  await page.getByRole('dialog', { name: 'Notes' }).getByLabel('Limit').fill('500');
  await audit(page, 'skill form', found);
  await page.keyboard.press('Escape');

  // An approval, inline in the chat and as a dialog elsewhere.
  await page.getByRole('link', { name: 'Skills' }).click();
  await page.getByRole('combobox', { name: 'Approval for Calculator' }).selectOption('ask');
  await page.getByRole('link', { name: 'Chat' }).click();
  await runCommand(page, '/calc 3+3');
  await expect(page.locator('.approval-inline')).toBeVisible();
  await audit(page, 'approval in the chat', found);
  await page.getByRole('link', { name: 'Notes' }).click();
  await expect(page.locator('.modal.approval')).toBeVisible();
  await audit(page, 'approval dialog', found);
  await page.locator('.modal.approval').getByRole('button', { name: 'Allow once' }).click();

  for (const place of PANELS.slice(1)) {
    await page.getByRole('link', { name: place[0].toUpperCase() + place.slice(1) }).click();
    await page.waitForTimeout(150);
    if (place === 'notes') await page.getByRole('option').first().click();
    await audit(page, place, found);
  }

  // Activity's detail and its confirmation.
  await page.getByRole('link', { name: 'Activity' }).click();
  await page.locator('tr.log-row').first().click();
  await expect(page.getByRole('dialog')).toBeVisible();
  await audit(page, 'activity detail', found);
  await page.keyboard.press('Escape');
  await page.getByRole('button', { name: 'Clear…' }).click();
  await audit(page, 'clear the log', found);
  await page.keyboard.press('Escape');

  // Settings: Clear all data, and a restore preview.
  await page.getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('button', { name: 'Clear all data…' }).click();
  await audit(page, 'clear all data', found);
  await page.keyboard.press('Escape');
  const downloading = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Download backup' }).click();
  const file = await (await downloading).path();
  await page.getByLabel('Backup file').setInputFiles({ name: 'backup.zip', mimeType: 'application/zip', buffer: (await import('node:fs')).readFileSync(file) });
  await expect(page.getByRole('dialog')).toBeVisible();
  await audit(page, 'restore preview', found);
  await page.keyboard.press('Escape');

  // The Agent Skills editor.
  await page.getByRole('link', { name: 'Skills' }).click();
  await page.getByRole('button', { name: /New skill/ }).click();
  await expect(page.getByRole('dialog')).toBeVisible();
  await audit(page, 'skill editor', found);

  expect(found).toEqual({});
});

test('a connected server: the Servers panel and the resource picker pass axe in both themes', async ({ page }) => {
  test.setTimeout(120_000);
  requirePeers();
  const server = await startEverything();
  try {
    const found = {};
    await openApp(page, 'servers');
    await page.getByLabel('Server URL').fill(server.url);
    await page.getByLabel('Server name').fill('everything');
    await page.getByRole('button', { name: 'Add server' }).click();
    const card = page.locator('.server-card[data-server="everything"]');
    await expect(card).toHaveAttribute('data-status', 'connected', { timeout: 30_000 });
    await audit(page, 'servers, connected', found);
    await page.getByRole('link', { name: 'Chat' }).click();
    await page.getByRole('button', { name: 'Attach a resource' }).click();
    await expect(page.getByRole('dialog', { name: 'Attach a resource' })).toBeVisible();
    await audit(page, 'resource picker', found);
    expect(found).toEqual({});
  } finally {
    server.stop();
  }
});

test('a conversation with a model: messages, a tool call waiting for approval, and a denied one pass axe in both themes', async ({ page }) => {
  test.setTimeout(120_000);
  const model = await startFakeModel('approval.json');
  try {
    const found = {};
    await openApp(page, 'skills');
    await page.getByRole('switch', { name: 'Enable Web fetch' }).check();
    await useProvider(page, model.base);
    await audit(page, 'settings with a provider', found);
    await page.getByRole('link', { name: 'Chat' }).click();
    await say(page, 'Please fetch https://example.com/ for me');
    const card = page.locator('.tool-card[data-skill="web_fetch"]');
    await expect(card).toHaveAttribute('data-state', 'asking');
    await audit(page, 'a tool call waiting for approval', found);
    await page.locator('.timeline').getByRole('dialog', { name: 'Web fetch' }).getByRole('button', { name: 'Deny' }).click();
    await expect(card).toHaveAttribute('data-state', 'denied');
    await expect(page.locator('.message.assistant').last()).toContainText('The fetch came back with:');
    await audit(page, 'a reply after a denied call', found);
    expect(found).toEqual({});
  } finally {
    await model.stop();
  }
});
