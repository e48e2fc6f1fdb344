// Attaching files in the chat: picked with the paperclip or dropped on the
// chat, they go to the next code run under /mnt/data, are kept as grants
// (listed in Settings, readable by name), and taking one off before any run
// used it deletes its copy.
import { test, expect } from '@playwright/test';
import path from 'node:path';
import { openApp, saveScreenshot } from '../support/app.mjs';
import { repoRoot } from '../support/env.mjs';
import { runSkill } from '../support/sandbox.mjs';

const csv = path.join(repoRoot, 'e2e', 'fixtures', 'project', 'data.csv');

test('an attached CSV goes to the next Python run, and stays granted', async ({ page }) => {
  test.setTimeout(180_000);
  const errors = await openApp(page);
  const chooser = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Attach files' }).click();
  await (await chooser).setFiles(csv);
  const attached = page.getByRole('list', { name: 'Attached files' });
  await expect(attached.locator('.attachment-name')).toHaveText(['data.csv']);
  await expect(attached.getByRole('listitem')).toContainText('56 B');
  await expect(page.getByTestId('attachments')).toContainText('/mnt/data/data.csv');
  await saveScreenshot(page, 'attach-waiting');

  // A skill that is not a code run leaves the attachment waiting.
  const other = await runSkill(page, 'calculator', { expression: '1+1' });
  expect(other.status).toBe('completed');
  await expect(attached.getByRole('listitem')).toHaveCount(1);

  const r = await runSkill(page, 'run_python', {
    code: "import csv\nrows = list(csv.DictReader(open('/mnt/data/data.csv')))\nsum(int(r['population']) for r in rows)",
  }, { timeout: 150_000 });
  expect(r.status, r.output).toBe('completed');
  await expect(r.card.locator('.code-value')).toHaveText('971218');
  await expect(r.card.locator('.code-meta')).toHaveText('Files data.csv');
  await expect(page.getByTestId('attachments')).toHaveCount(0);
  await saveScreenshot(page, 'attach-ran');

  // The attachment is a grant now: readable by name, listed in Settings.
  const read = await runSkill(page, 'read_file', { path: 'data.csv' });
  expect(read.output).toBe('data.csv (UTF-8, 56 B)\ncity,population\nLisbon,545923\nPorto,231962\nBraga,193333\n');
  await page.getByRole('link', { name: 'Settings' }).click();
  await expect(page.locator('.file-grant[data-grant="data.csv"]')).toContainText('a copy kept in this browser');
  expect(errors).toEqual([]);
});

test('files dropped on the chat go to JavaScript; one taken off first is deleted', async ({ page }) => {
  const errors = await openApp(page);
  const drop = async (files) => {
    const transfer = await page.evaluateHandle((list) => {
      const dt = new DataTransfer();
      for (const [name, text] of list) dt.items.add(new File([text], name, { type: 'text/plain' }));
      return dt;
    }, files);
    await page.dispatchEvent('section.chat', 'dragover', { dataTransfer: transfer });
    await expect(page.locator('section.chat')).toHaveClass(/dragging/);
    await page.dispatchEvent('section.chat', 'drop', { dataTransfer: transfer });
  };
  await drop([['keep.txt', 'kept text'], ['oops.txt', 'not meant']]);
  const attached = page.getByRole('list', { name: 'Attached files' });
  await expect(attached.getByRole('listitem')).toHaveCount(2);
  await expect(page.locator('section.chat')).not.toHaveClass(/dragging/);
  await page.getByRole('button', { name: 'Remove oops.txt' }).click();
  await expect(attached.getByRole('listitem')).toHaveCount(1);

  const r = await runSkill(page, 'run_javascript', {
    code: "listFiles().map(f => f.path + ': ' + readTextFile(f.path)).join('; ')",
  });
  expect(r.status, r.output).toBe('completed');
  await expect(r.card.locator('.code-value')).toHaveText('"/mnt/data/keep.txt: kept text"');

  // The one taken off was never granted for good.
  const gone = await runSkill(page, 'read_file', { path: 'oops.txt' });
  expect(gone.status).toBe('failed');
  expect(gone.output).toContain("'oops.txt' is not inside a granted file or folder; granted: keep.txt");
  expect(errors).toEqual([]);
});
