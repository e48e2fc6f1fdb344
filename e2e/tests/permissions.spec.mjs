// The permission layer as a person meets it: the approval dialog with the
// full arguments, deny, always allow, revoking it, and the exported log.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import { expectScreen, openApp, runCommand } from '../support/app.mjs';

async function setApproval(page, skillName, value) {
  await page.getByRole('link', { name: 'Skills' }).click();
  await page.getByRole('combobox', { name: `Approval for ${skillName}` }).selectOption(value);
}

test('ask, deny, always allow, revoke, and export the log', { tag: '@baseline' }, async ({ page }) => {
  const errors = await openApp(page);

  // 1. Set notes to "ask" and run it from the composer.
  await setApproval(page, 'Notes', 'ask');
  await page.getByRole('link', { name: 'Chat' }).click();
  const longBody = 'Line of the body that is long enough to need wrapping. '.repeat(40) + 'THE-END-MARKER';
  const args = { action: 'create', title: 'Groceries', body: longBody, tags: ['home'] };
  await runCommand(page, `/notes ${JSON.stringify(args)}`);

  // 2. The dialog shows the full arguments, untruncated.
  const dialog = page.getByRole('dialog', { name: 'Notes' });
  await expect(dialog).toBeVisible();
  await expect(dialog).toContainText('you asked to approve every Notes call');
  const shown = await dialog.getByLabel('Full arguments').textContent();
  expect(JSON.parse(shown)).toEqual(args);
  // The approving buttons arm a moment after the dialog opens; the
  // baseline shows them armed.
  await expect(dialog.getByRole('button', { name: 'Allow once' })).toBeEnabled();
  await expectScreen(page, 'approval-dialog', { hide: ['.conversation-detail'] });

  // 3. Deny: a denied card and a log entry.
  await dialog.getByRole('button', { name: 'Deny' }).click();
  await expect(dialog).toBeHidden();
  const denied = page.locator('.result-card[data-status="denied"]');
  await expect(denied.locator('.card-output')).toHaveText('you denied this Notes call');
  await page.getByRole('link', { name: 'Notes' }).click();
  await expect(page.getByText('No notes yet.')).toBeVisible();

  // Esc denies too.
  await page.getByRole('link', { name: 'Chat' }).click();
  await runCommand(page, '/notes {"action":"list"}');
  await expect(dialog).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(page.locator('.result-card[data-status="denied"]')).toHaveCount(2);

  // 4. Choose always allow; no dialog next time.
  await setApproval(page, 'Notes', '');
  await page.getByRole('link', { name: 'Settings' }).click();
  await page.getByLabel(/Ask for everything/).check();
  await page.getByRole('link', { name: 'Chat' }).click();
  await runCommand(page, `/notes ${JSON.stringify(args)}`);
  await expect(dialog).toBeVisible();
  await dialog.getByRole('button', { name: 'Always allow this skill' }).click();
  await expect(page.locator('.result-card[data-status="completed"] .card-output')).toHaveText('Created note "Groceries".');
  await runCommand(page, '/notes {"action":"list"}');
  await expect(page.locator('.result-card[data-status="completed"]')).toHaveCount(2);
  await expect(dialog).toBeHidden();

  // "Always allow" shows in the Skills panel and survives a reload.
  await page.reload();
  await page.waitForSelector('body[data-ready]');
  await page.getByRole('link', { name: 'Skills' }).click();
  const notesRow = page.locator('.skill[data-skill="notes"]');
  await expect(notesRow.getByText('Always allowed')).toBeVisible();

  // 5. Revoke it, and the dialog is back.
  await notesRow.getByRole('button', { name: 'Revoke always allow' }).click();
  await expect(notesRow.getByText('Always allowed')).toBeHidden();
  await page.getByRole('link', { name: 'Chat' }).click();
  await runCommand(page, '/notes {"action":"list"}');
  await expect(dialog).toBeVisible();
  await dialog.getByRole('button', { name: 'Allow once' }).click();
  await expect(dialog).toBeHidden();

  // 6. Export the log and check its lines.
  await page.getByRole('link', { name: 'Activity' }).click();
  await expect(page.locator('tr.log-row')).toHaveCount(5);
  // Times and durations differ from run to run.
  await expectScreen(page, 'activity', { hide: ['tr.log-row td:nth-child(1)', 'tr.log-row td:nth-child(5)'] });
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: /Export 5 as JSON Lines/ }).click(),
  ]);
  const lines = fs.readFileSync(await download.path(), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  expect(lines).toHaveLength(5);
  const statuses = lines.map((l) => l.result.status).sort();
  expect(statuses).toEqual(['completed', 'completed', 'completed', 'denied', 'denied']);
  const deniedLine = lines.find((l) => l.result.status === 'denied' && l.arguments.action === 'create');
  expect(deniedLine.arguments).toEqual(args);
  expect(deniedLine.result.decision).toEqual({ outcome: 'denied', by: 'user', reason: 'you asked to approve every Notes call' });
  const always = lines.find((l) => l.result.decision?.reason === 'always allowed from now on');
  expect(always.result.decision.by).toBe('user');
  expect(errors).toEqual([]);
});

test('activity filters, search and details', async ({ page }) => {
  await openApp(page);
  await runCommand(page, '/calc 15% of 847');
  await expect(page.locator('.result-card')).toHaveCount(1);
  await runCommand(page, '/calc 1/0');
  await expect(page.locator('.result-card')).toHaveCount(2);
  await runCommand(page, '/tasks {"action":"create","title":"Buy stamps"}');
  await expect(page.locator('.result-card')).toHaveCount(3);

  await page.getByRole('link', { name: 'Activity' }).click();
  await expect(page.locator('tr.log-row')).toHaveCount(3);
  await page.getByLabel('Status').selectOption('failed');
  await expect(page.locator('tr.log-row')).toHaveCount(1);
  await page.getByLabel('Status').selectOption('');
  await page.getByLabel('Skill').selectOption('tasks');
  await expect(page.locator('tr.log-row')).toHaveCount(1);
  await page.getByLabel('Skill').selectOption('');
  await page.getByLabel('Search activity').fill('127.05');
  await expect(page.locator('tr.log-row')).toHaveCount(1);
  await page.locator('tr.log-row').click();
  const detail = page.getByRole('dialog', { name: 'Calculator' });
  await expect(detail).toContainText('"expression": "15% of 847"');
  await page.keyboard.press('Escape');
  await page.getByLabel('Search activity').fill('nothing-like-this');
  await expect(page.getByText('No activity matches these filters.')).toBeVisible();

  await page.getByLabel('Search activity').fill('');
  await page.getByRole('button', { name: 'Clear…' }).click();
  await page.getByRole('button', { name: 'Clear the log' }).click();
  await expect(page.getByText('Nothing has run yet.', { exact: false })).toBeVisible();
});

test('a click already on its way when the question appears cannot allow anything', async ({ page }) => {
  await openApp(page, 'settings');
  await page.getByLabel(/Ask for everything/).check();
  await page.getByRole('link', { name: 'Chat' }).click();
  // Something clicks wherever "Allow once" shows up, the instant it does:
  // a page timing a click, or a person double-clicking what was there.
  await page.evaluate(() => {
    window.clicks = [];
    new MutationObserver(() => {
      for (const b of document.querySelectorAll('.approval button')) {
        if (b.textContent.trim() === 'Allow once' && !b.dataset.tried) {
          b.dataset.tried = '1';
          window.clicks.push(b.disabled ? 'inactive' : 'active');
          b.click();
        }
      }
    }).observe(document.body, { childList: true, subtree: true });
  });
  await runCommand(page, '/calc 6*7');
  const dialog = page.getByRole('dialog', { name: 'Calculator' });
  await expect(dialog).toBeVisible();
  expect(await page.evaluate(() => window.clicks)).toEqual(['inactive']);
  // The question is still open; nothing ran.
  await expect(page.locator('.result-card[data-status="completed"]')).toHaveCount(0);
  // A moment later the person can answer.
  await dialog.getByRole('button', { name: 'Allow once' }).click();
  await expect(page.locator('.result-card .card-output').last()).toHaveText('42');
});
