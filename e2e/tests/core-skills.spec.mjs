// Notes, tasks and memory: the same data from the command bar and from
// their own panels, with undo.
import { test, expect } from '@playwright/test';
import { openApp, runCommand, saveScreenshot } from '../support/app.mjs';

test('a note made by the skill is edited in its panel, and undo works from the card', async ({ page }) => {
  await openApp(page);
  await runCommand(page, '/notes {"action":"create","title":"Trip","body":"# Lisbon\\n\\nBook the **tram**.\\n\\n<img src=x onerror=alert(1)>","tags":["travel"]}');
  const card = page.locator('.result-card').first();
  await expect(card.locator('.card-output')).toHaveText('Created note "Trip".');

  await page.getByRole('link', { name: 'Notes' }).click();
  await page.getByRole('option', { name: /Trip/ }).click();
  await page.getByRole('tab', { name: 'Preview' }).click();
  const md = page.locator('.markdown');
  await expect(md.locator('h1')).toHaveText('Lisbon');
  await expect(md.locator('strong')).toHaveText('tram');
  await expect(md.locator('img')).toHaveCount(0);
  await expect(md).toContainText('<img src=x onerror=alert(1)>');

  await page.getByRole('tab', { name: 'Write' }).click();
  await page.getByLabel('Title').fill('Lisbon trip');
  await page.getByLabel('Title').press('Control+s');
  await expect(page.getByRole('status')).toContainText('Updated note "Lisbon trip".');
  await page.getByLabel('Search notes').fill('tram');
  await expect(page.getByRole('option')).toHaveCount(1);
  await saveScreenshot(page, 'notes');

  // Undo the creation from the chat card: the note is gone everywhere.
  await page.getByRole('link', { name: 'Chat' }).click();
  await page.getByRole('button', { name: 'Undo: delete this note' }).click();
  await expect(page.locator('.result-card').nth(1).locator('.card-output')).toHaveText('Deleted note "Lisbon trip".');
  await page.getByRole('link', { name: 'Notes' }).click();
  await expect(page.getByText('No notes yet.', { exact: false })).toBeVisible();
});

test('tasks: add, complete, filter and delete with undo, persisted', async ({ page }) => {
  await openApp(page, 'tasks');
  await page.getByLabel('New task').fill('Renew passport');
  await page.getByLabel('Priority').selectOption('high');
  await page.getByRole('button', { name: 'Add' }).click();
  await page.getByLabel('New task').fill('Pay rent');
  await page.getByLabel('Due date').fill('2020-01-01');
  await page.getByRole('button', { name: 'Add' }).click();
  const rows = page.locator('.task');
  await expect(rows).toHaveCount(2);
  await expect(rows.first()).toContainText('Pay rent');
  await expect(rows.first()).toContainText('Overdue · 2020-01-01');

  await page.getByRole('tab', { name: /Overdue/ }).click();
  await expect(rows).toHaveCount(1);
  await page.getByRole('tab', { name: /Open/ }).click();
  await page.getByLabel('Done: Pay rent').click();
  await expect(rows).toHaveCount(1);
  await page.getByRole('tab', { name: /Done/ }).click();
  await expect(rows).toHaveCount(1);
  await saveScreenshot(page, 'tasks');

  await page.getByRole('tab', { name: /All/ }).click();
  await page.getByLabel('Delete Renew passport').click();
  await expect(rows).toHaveCount(1);
  await page.getByRole('button', { name: 'Undo' }).click();
  await expect(rows).toHaveCount(2);

  await page.reload();
  await page.waitForSelector('body[data-ready]');
  await page.getByRole('tab', { name: /All/ }).click();
  await expect(rows).toHaveCount(2);

  // The skill sees the same list.
  await page.getByRole('link', { name: 'Chat' }).click();
  await runCommand(page, '/tasks {"action":"list","status":"all"}');
  await expect(page.locator('.result-card .card-output')).toContainText(/^Pay rent, .*, done$/m);
});

test('memory: remember from the panel, recall with scores from the skill, forget', async ({ page }) => {
  await openApp(page, 'memory');
  for (const fact of ['Vegetarian, avoids fish', 'Works Monday to Thursday from Lyon', 'Has a cat named Miso']) {
    await page.getByLabel('Something to remember').fill(fact);
    await page.getByRole('button', { name: 'Remember' }).click();
    await expect(page.locator('.memory-text', { hasText: fact })).toBeVisible();
  }
  await page.getByLabel('Search memories').fill('cat');
  await expect(page.locator('.memory-item')).toHaveCount(1);
  await expect(page.locator('.memory-item .chip')).toHaveText(/\d+%/);
  await page.getByLabel('Search memories').fill('');

  await page.getByRole('link', { name: 'Chat' }).click();
  await runCommand(page, '/memory {"action":"recall","query":"what is my cat called"}');
  await expect(page.locator('.result-card .card-output')).toContainText(/Has a cat named Miso \(\d+% match\)/);

  await page.getByRole('link', { name: 'Memory' }).click();
  await page.locator('.memory-item', { hasText: 'Miso' }).getByRole('button', { name: 'Forget' }).click();
  await expect(page.locator('.memory-item')).toHaveCount(2);
  await saveScreenshot(page, 'memory');
});

test('bulk deletes always ask, even in auto mode', async ({ page }) => {
  await openApp(page, 'settings');
  await page.getByLabel(/^Auto/).check();
  await page.getByRole('link', { name: 'Chat' }).click();
  await runCommand(page, '/notes {"action":"create","title":"A"}');
  await runCommand(page, '/notes {"action":"create","title":"B"}');
  await expect(page.locator('.result-card[data-status="completed"]')).toHaveCount(2);
  await runCommand(page, '/notes {"action":"list"}');
  await expect(page.locator('.result-card')).toHaveCount(3);
  // Cards show titles, never ids: the ids come from the notes store.
  await expect(page.locator('.result-card').last().locator('.card-output')).toHaveText(/^2 notes:\n(A\nB|B\nA)$/);
  const found = await page.evaluate(() => new Promise((resolve, reject) => {
    const open = indexedDB.open('hearth');
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const db = open.result;
      const all = db.transaction('notes').objectStore('notes').getAll();
      all.onsuccess = () => { db.close(); resolve(all.result.map((n) => n.id)); };
      all.onerror = () => { db.close(); reject(all.error); };
    };
  }));
  expect(found).toHaveLength(2);

  await runCommand(page, `/notes ${JSON.stringify({ action: 'delete', ids: found })}`);
  const dialog = page.getByRole('dialog', { name: 'Notes' });
  await expect(dialog).toContainText('this call would delete 2 notes; bulk changes always ask');
  await expect(dialog.getByRole('button', { name: 'Always allow this skill' })).toHaveCount(0);
  await dialog.getByRole('button', { name: 'Allow once' }).click();
  await expect(page.locator('.result-card').last().locator('.card-output')).toHaveText('Deleted 2 notes.');
  // A single delete does not ask in auto mode.
  await runCommand(page, '/notes {"action":"create","title":"C"}');
  await expect(page.locator('.result-card')).toHaveCount(5);
  await expect(dialog).toBeHidden();
});
