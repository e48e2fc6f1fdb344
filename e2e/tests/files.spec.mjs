// Granting a folder through the fallback input (as in browsers without the
// File System Access pickers) and reading it through the command bar:
// contents in any encoding, listings, search, ranges, refusals, and the
// grant surviving a reload until it is revoked.
import { test, expect } from '@playwright/test';
import path from 'node:path';
import { openApp, saveScreenshot } from '../support/app.mjs';
import { repoRoot } from '../support/env.mjs';
import { grantFolder, runSkill, withoutPickers } from '../support/sandbox.mjs';

const project = path.join(repoRoot, 'e2e', 'fixtures', 'project');

test.beforeEach(async ({ context }) => {
  await withoutPickers(context);
});

test('a granted folder is read through the command bar', async ({ page }) => {
  const errors = await openApp(page);
  await grantFolder(page, project);

  const notes = await runSkill(page, 'read_file', { path: 'project/notes.md' });
  expect(notes.status).toBe('completed');
  expect(notes.output).toBe('project/notes.md (UTF-8, 72 B)\n# Notes\n\nHearth reads this file through a grant.\nTODO: water the plants\n');

  const cases = [
    ['project/sub/latin1.txt', 'completed', 'project/sub/latin1.txt (Windows-1252, 38 B)\ncafé crème — “quoted” in Windows-1252\n'],
    ['project/sub/utf16.txt', 'completed', 'project/sub/utf16.txt (UTF-16LE, 48 B)\nUTF-16 text: ünïcødé ✓\n'],
    ['/mnt/data/project/sub/deeper/todo.txt', 'completed', 'project/sub/deeper/todo.txt (UTF-8, 46 B)\nTODO: write the tests\nDONE: build the sandbox\n'],
    ['project/pixel.png', 'failed', `'project/pixel.png' is binary (PNG image, 70 B); read_file returns text only. To work with it, run Python with files: ["project/pixel.png"] and open '/mnt/data/project/pixel.png' in binary mode ('rb').`],
    ['project/sub', 'failed', "'project/sub' is a folder; use list_files to see what it holds"],
    ['project/missing.txt', 'failed', "'project/missing.txt' does not exist (it may have been moved or deleted since it was granted)"],
    ['project/../../etc/passwd', 'failed', "'project/../../etc/passwd' uses '..'; paths cannot leave the grant they name"],
    ['/etc/passwd', 'failed', "'/etc/passwd' is absolute; paths are relative to a grant, e.g. 'reports/q3.csv' (code sees them under /mnt/data/)"],
    ['project/%2e%2e/x', 'failed', "'project/%2e%2e/x' contains percent-encoding; write the name as it is"],
    ['project\\..\\x', 'failed', "'project\\..\\x' contains a backslash; separate folders with '/'"],
    ['other/file.txt', 'failed', "'other/file.txt' is not inside a granted file or folder; granted: project/"],
  ];
  for (const [p, status, want] of cases) {
    const r = await runSkill(page, 'read_file', { path: p });
    expect(r.status, p).toBe(status);
    expect(r.output, p).toBe(want);
  }

  const range = await runSkill(page, 'read_file', { path: 'project/data.csv', offset: 16, length: 14 });
  expect(range.output).toBe('project/data.csv (UTF-8, bytes 16–30 of 56)\nLisbon,545923\n[… 26 B more; read on with offset 30]');

  const list = await runSkill(page, 'list_files', {});
  expect(list.output).toBe([
    'project: 6 files, 330 B',
    'project/',
    'project/data.csv             56 B',
    'project/notes.md             72 B',
    'project/pixel.png            70 B',
    'project/sub/',
    'project/sub/deeper/',
    'project/sub/deeper/todo.txt  46 B',
    'project/sub/latin1.txt       38 B',
    'project/sub/utf16.txt        48 B',
  ].join('\n'));

  const search = await runSkill(page, 'search_files', { query: 'todo' });
  expect(search.output).toBe('2 matches for "todo" in 5 files\nproject/notes.md:4: TODO: water the plants\nproject/sub/deeper/todo.txt:1: TODO: write the tests');
  await saveScreenshot(page, 'files-read');
  expect(errors).toEqual([]);
});

test('a grant survives a reload, is listed in Settings, and reading stops once it is revoked', async ({ page }) => {
  await openApp(page);
  await grantFolder(page, project);
  await page.reload();
  await page.waitForSelector('body[data-ready]');
  const r = await runSkill(page, 'read_file', { path: 'project/data.csv' });
  expect(r.output).toContain('Lisbon,545923');

  await page.getByRole('link', { name: 'Settings' }).click();
  const grant = page.locator('.file-grant[data-grant="project"]');
  await expect(grant).toContainText('folder · 6 files, 330 B · a copy kept in this browser');
  await expect(grant).toContainText('Allowed');
  // The Files panel sits below Permissions and Web search: bring it into view.
  await page.locator('.files-panel h2').evaluate((h) => h.scrollIntoView({ block: 'start' }));
  await saveScreenshot(page, 'files-settings');
  await grant.getByRole('button', { name: 'Revoke project' }).click();
  await page.getByRole('alertdialog', { name: 'Revoke access to project?' }).getByRole('button', { name: 'Revoke' }).click();
  await expect(page.getByTestId('files-notice')).toHaveText('Revoked project.');
  await expect(page.locator('.file-grant')).toHaveCount(0);

  await page.getByRole('link', { name: 'Chat' }).click();
  // Chat draws the conversation's cards again from the store; the next
  // run's card is the one after the first read's.
  await expect(page.locator('.result-card[data-skill="read_file"]')).toHaveCount(1);
  const after = await runSkill(page, 'read_file', { path: 'project/data.csv' });
  expect(after.status).toBe('failed');
  expect(after.output).toBe('no files or folders are granted yet; ask the person to grant one in Settings → Files');
  // The copy is gone from the private file system too.
  const left = await page.evaluate(async () => {
    const root = await navigator.storage.getDirectory();
    const names = [];
    try {
      const grants = await root.getDirectoryHandle('grants');
      for await (const name of grants.keys()) names.push(name);
    } catch { /* no grants folder */ }
    return names;
  });
  expect(left).toEqual([]);
});

test('granted files, one at a time, are readable under their own names', async ({ page }) => {
  await openApp(page);
  await page.getByRole('link', { name: 'Settings' }).click();
  const chooser = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Grant files…' }).click();
  await (await chooser).setFiles([path.join(project, 'data.csv'), path.join(project, 'notes.md')]);
  await expect(page.getByTestId('files-notice')).toHaveText('Granted data.csv, notes.md.');
  await page.getByRole('link', { name: 'Chat' }).click();
  expect((await runSkill(page, 'read_file', { path: 'notes.md' })).output).toContain('TODO: water the plants');
  const below = await runSkill(page, 'read_file', { path: 'notes.md/x' });
  expect(below.output).toBe("'notes.md/x' goes below the granted file 'notes.md', which is not a folder");
  const js = await runSkill(page, 'run_javascript', { code: "readTextFile('/mnt/data/data.csv').split('\\n').length", files: ['data.csv'] });
  expect(js.output).toContain('5');
});
