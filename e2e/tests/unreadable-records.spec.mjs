// A stored record Hearth cannot read never locks the person out: one store
// after another gets a record of the wrong shape (as a bad sync, a bug or
// a hand-edited backup could leave), and every time the app still starts,
// says what it set aside, and keeps Settings, backup and export working.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import { openApp, saveScreenshot } from '../support/app.mjs';
import { readZip } from '../support/zip.mjs';

// One record per store: the key IndexedDB needs, a wrong type where the
// app reads a field.
const UNREADABLE = [
  ['activity', { id: 'bad', skill_id: 5, result: 'no' }, 'Activity log'],
  ['notes', { id: 'bad', title: 5 }, 'Notes'],
  ['tasks', { id: 'bad', title: ['x'] }, 'Tasks'],
  ['memories', { id: 'bad', text: { a: 1 } }, 'Memories'],
  ['settings', { key: 'permissions', value: 'garbage' }, 'Settings: permissions'],
  ['settings', { key: 'provider', value: { kind: 3 } }, 'provider'],
  ['usage', { skill_id: 'calculator', count: 'many' }, 'Skill usage'],
  ['conversations', { id: 'bad', messages: 'none', updated_ms: 1 }, 'Conversations'],
  ['skill_packages', { name: 'broken', skill_md: 5 }, 'Skill packages'],
  ['skill_files', { key: 'broken/SKILL.md', package: 5 }, 'Skill files'],
  ['mcp_servers', { id: 'bad', source: 12 }, 'MCP servers'],
  ['grants', { id: 'bad', name: 7 }, 'File grants'],
];

test('each store in turn holds a record Hearth cannot read, and Hearth still starts', async ({ page }) => {
  test.setTimeout(180_000);
  const errors = await openApp(page, 'chat');
  for (const [store, record, label] of UNREADABLE) {
    await page.evaluate(([store, record]) => new Promise((resolve, reject) => {
      const open = indexedDB.open('hearth');
      open.onsuccess = () => {
        const db = open.result;
        const tx = db.transaction(store, 'readwrite');
        tx.objectStore(store).put(record);
        tx.oncomplete = () => { db.close(); resolve(); };
        tx.onerror = () => reject(tx.error);
      };
      open.onerror = () => reject(open.error);
    }), [store, record]);
    await page.reload();
    await page.waitForSelector('body[data-ready]');
    await expect(page.getByText('Hearth could not start'), store).toHaveCount(0);
    // The places that read these stores open.
    for (const place of ['Notes', 'Tasks', 'Memory', 'Skills', 'Servers', 'Activity', 'Settings', 'Chat']) {
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: place }).click();
      await expect(page.locator('main.content'), `${store}: ${place}`).toBeVisible();
    }
    const notice = page.getByTestId('set-aside-notice');
    await expect(notice, store).toContainText('Hearth could not read');
    await expect(notice, store).toContainText(label);
  }
  await saveScreenshot(page, 'set-aside-notice');

  // Unreadable permissions: every skill asks first.
  await page.getByRole('link', { name: 'Settings' }).click();
  await expect(page.locator('input[name="permission-mode"][value="ask-everything"]')).toBeChecked();

  // The records can be downloaded from the notice…
  const notice = page.getByTestId('set-aside-notice');
  const downloading = page.waitForEvent('download');
  await notice.getByRole('button', { name: 'Download' }).click();
  const kept = JSON.parse(fs.readFileSync(await (await downloading).path(), 'utf8'));
  for (const [store, record] of UNREADABLE) {
    expect(kept.some((k) => k.store === store && JSON.stringify(k.record) === JSON.stringify(record)), store).toBe(true);
  }
  // …and a backup still holds every one of them.
  const backingUp = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Download backup' }).click();
  const entries = readZip(fs.readFileSync(await (await backingUp).path()));
  const text = Object.values(entries).map((b) => b.toString('utf8')).join('\n');
  for (const [store, record] of UNREADABLE) {
    expect(text, store).toContain(JSON.stringify(record).slice(1, -1));
  }
  await notice.getByRole('button', { name: 'Dismiss' }).click();
  await expect(notice).toHaveCount(0);
  expect(errors).toEqual([]);
});
