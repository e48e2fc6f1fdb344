// One-file backup and restore, the way a person does it in Settings:
// download a backup, see damaged files refused with nothing changed, clear
// everything, restore the file and get every record back.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openApp, runCommand, saveScreenshot } from '../support/app.mjs';

/// The item count the storage table shows for `store`.
function itemsOf(page, store) {
  return page.getByTestId('store-table').locator(`tr[data-store="${store}"] td.num`).first();
}

test('backup, damaged files refused, Clear all, restore: every record comes back', async ({ page }) => {
  const errors = await openApp(page, 'chat');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-backup-e2e-'));
  try {
    for (const [title, body] of [
      ['Alpha', 'first note'],
      ['Beta', 'second note, with ünïcode ✓'],
    ]) {
      await runCommand(page, `/notes {"action": "create", "title": "${title}", "body": "${body}"}`);
      await expect(page.locator('.result-card').last()).toHaveAttribute('data-status', 'completed');
    }
    await runCommand(page, '/calc 6*7');
    await expect(page.locator('.result-card .card-output').last()).toHaveText('42');

    await page.getByRole('link', { name: 'Settings' }).click();
    await expect(itemsOf(page, 'notes')).toHaveText('2');
    await expect(itemsOf(page, 'activity')).toHaveText('3');
    await expect(page.getByTestId('storage-usage')).toContainText(' of ');

    // Download the backup.
    const downloading = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download backup' }).click();
    const download = await downloading;
    expect(download.suggestedFilename()).toMatch(/^hearth-backup-\d{4}-\d{2}-\d{2}\.zip$/);
    const file = path.join(tmp, download.suggestedFilename());
    await download.saveAs(file);
    await expect(page.getByTestId('backup-note')).toContainText('Saved hearth-backup-');
    const bytes = fs.readFileSync(file);
    expect(bytes.subarray(0, 2).toString()).toBe('PK');

    // Damaged and foreign files are refused, and nothing changes.
    const input = page.getByLabel('Backup file');
    const bad = [
      ['random.zip', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256))],
      ['truncated.zip', bytes.subarray(0, Math.floor(bytes.length / 2))],
      ['empty.zip', Buffer.alloc(0)],
    ];
    for (const [name, buffer] of bad) {
      await input.setInputFiles({ name, mimeType: 'application/zip', buffer });
      await expect(page.getByTestId('restore-error')).toContainText('Nothing was changed');
      await expect(page.getByRole('dialog')).toHaveCount(0);
      await expect(itemsOf(page, 'notes')).toHaveText('2');
    }
    await saveScreenshot(page, 'backup-refused');

    // Clear all, behind a confirmation.
    await page.getByRole('button', { name: 'Clear all data…' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete everything' }).click();
    await expect(page.getByText('All data was deleted.')).toBeVisible();
    await expect(itemsOf(page, 'notes')).toHaveText('0');
    await expect(itemsOf(page, 'activity')).toHaveText('0');

    // Restore: a preview of the counts first, then replace.
    await input.setInputFiles(file);
    const dialog = page.getByRole('dialog');
    await expect(dialog.getByRole('heading', { name: 'Restore this backup?' })).toBeVisible();
    const notesRow = dialog.getByTestId('restore-table').locator('tr[data-store="notes"] td');
    await expect(notesRow).toHaveText(['2', '0', '2', '+2 new']);
    await dialog.getByRole('radio', { name: /Replace/ }).check();
    await expect(dialog.getByRole('button', { name: 'Replace everything here' })).toBeEnabled();
    await saveScreenshot(page, 'restore-preview');
    await dialog.getByRole('button', { name: 'Replace everything here' }).click();
    await expect(page.getByTestId('restore-done')).toContainText('Restored:');
    await expect(page.getByRole('dialog')).toHaveCount(0);
    await expect(itemsOf(page, 'notes')).toHaveText('2');
    await expect(itemsOf(page, 'activity')).toHaveText('3');

    // The restored records are the originals, and the app uses them at once.
    await page.getByRole('link', { name: 'Notes' }).click();
    await expect(page.getByRole('option', { name: /Alpha/ })).toBeVisible();
    await page.getByRole('option', { name: /Beta/ }).click();
    await expect(page.getByRole('article').getByText('second note, with ünïcode ✓')).toBeVisible();
    await page.getByRole('link', { name: 'Activity' }).click();
    await expect(page.getByText('6*7')).toBeVisible();

    // Restoring the same file again into a full profile (merge) changes nothing.
    await page.getByRole('link', { name: 'Settings' }).click();
    await input.setInputFiles(file);
    await expect(dialog.getByTestId('restore-table').locator('tr[data-store="notes"] td')).toHaveText([
      '2',
      '2',
      '2',
      'no change',
    ]);
    await dialog.getByRole('button', { name: 'Merge into this browser' }).click();
    await expect(page.getByTestId('restore-done')).toContainText('nothing changed');
    expect(errors).toEqual([]);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
