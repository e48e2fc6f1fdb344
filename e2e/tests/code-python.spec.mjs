// Running Python from the command bar: Pyodide loads on first use with a
// progress indicator, runs are stopped at their limit, files come in under
// /mnt/data and go out under /mnt/out, and variables persist per
// conversation unless switched off.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import path from 'node:path';
import { openApp, saveScreenshot } from '../support/app.mjs';
import { repoRoot } from '../support/env.mjs';
import { grantFolder, runSkill, withoutPickers } from '../support/sandbox.mjs';

const project = path.join(repoRoot, 'e2e', 'fixtures', 'project');

test('print(sum(range(10))) shows 45, after Python loads with a progress indicator', async ({ page }) => {
  test.setTimeout(180_000);
  const errors = await openApp(page);
  const composer = page.getByRole('textbox', { name: 'Message or command' });
  await composer.fill('/run_python print(sum(range(10)))');
  await composer.press('Enter');
  await expect(page.getByTestId('python-status')).toContainText(/Loading Python…|Starting Python…/);
  await saveScreenshot(page, 'python-loading');
  const card = page.locator('.result-card').first();
  await expect(card).toHaveAttribute('data-status', 'completed', { timeout: 150_000 });
  await expect(card.locator('.code-stdout')).toHaveText('45\n');
  await expect(page.getByTestId('python-status')).toHaveCount(0);
  // Warm now: the next run does not load anything.
  const r = await runSkill(page, 'run_python', { code: 'import sys\nsys.version_info[:2]' });
  expect(r.output).toContain('(3, 14)');
  await saveScreenshot(page, 'python-45');
  expect(errors).toEqual([]);
});

test('a loop that never ends is interrupted within its limit, and the next run works', async ({ page }) => {
  test.setTimeout(180_000);
  await openApp(page);
  await runSkill(page, 'run_python', { code: 'x = 1' }, { timeout: 150_000 });
  const started = Date.now();
  const r = await runSkill(page, 'run_python', { code: 'n = 0\nwhile True:\n    n += 1', timeout_ms: 2000 });
  const took = Date.now() - started;
  expect(r.status).toBe('failed');
  expect(r.output).toBe('timed out after 2.0 s: Python was interrupted (KeyboardInterrupt); variables from earlier runs are kept');
  expect(took).toBeLessThan(2000 + 3000);
  const next = await runSkill(page, 'run_python', { code: 'print(x, n > 0)' });
  expect(next.status).toBe('completed');
  expect(next.output).toBe('1 True\n');

  // Code that swallows the interrupt is stopped by terminating its worker.
  const stubborn = await runSkill(page, 'run_python', {
    code: 'while True:\n    try:\n        while True: pass\n    except KeyboardInterrupt:\n        pass',
    timeout_ms: 1000,
  });
  expect(stubborn.output).toMatch(/^timed out after 1\.0 s: Python did not stop when interrupted, so it was restarted/);
  const fresh = await runSkill(page, 'run_python', { code: "print('fresh', 'x' in globals())" }, { timeout: 150_000 });
  expect(fresh.output).toBe('fresh False\n');
});

test('a CSV from a granted folder is read from /mnt/data, and /mnt/out files download', async ({ browser, baseURL }) => {
  test.setTimeout(180_000);
  const context = await browser.newContext({ baseURL });
  await withoutPickers(context);
  const page = await context.newPage();
  const errors = await openApp(page);
  await grantFolder(page, project);
  const r = await runSkill(page, 'run_python', {
    code: [
      'import csv',
      "rows = list(csv.DictReader(open('/mnt/data/project/data.csv')))",
      "total = sum(int(r['population']) for r in rows)",
      "with open('/mnt/out/summary.txt', 'w') as f:",
      "    f.write(f'{len(rows)} cities, {total} people\\n')",
      'print(len(rows), total)',
      'total',
    ].join('\n'),
    files: ['project/data.csv'],
  }, { timeout: 150_000 });
  expect(r.status, r.output).toBe('completed');
  await expect(r.card.locator('.code-stdout')).toHaveText('3 971218\n');
  await expect(r.card.locator('.code-value')).toHaveText('971218');
  const download = page.waitForEvent('download');
  await r.card.getByRole('button', { name: 'Download summary.txt' }).click();
  expect(fs.readFileSync(await (await download).path(), 'utf8')).toBe('3 cities, 971218 people\n');

  // The files are read-only, and only what the run was handed is there.
  const ro = await runSkill(page, 'run_python', {
    code: "import os\nprint(sorted(os.listdir('/mnt/data/project')))\nopen('/mnt/data/project/data.csv', 'a').write('x')",
    files: ['project/data.csv'],
  });
  expect(ro.status).toBe('failed');
  expect(ro.output).toContain("PermissionError: [Errno 2] Permission denied: '/mnt/data/project/data.csv'");
  expect(ro.output).toContain("['data.csv']");

  // Binary files reach Python as bytes.
  const png = await runSkill(page, 'run_python', {
    code: "data = open('/mnt/data/project/pixel.png', 'rb').read()\n(len(data), data[:4])",
    files: ['project/pixel.png'],
  });
  expect(png.output).toContain("(70, b'\\x89PNG')");
  await saveScreenshot(page, 'python-csv');
  expect(errors).toEqual([]);
  await context.close();
});

test('input arrives on stdin, variables persist per conversation unless switched off, and Restart clears them', async ({ page }) => {
  test.setTimeout(240_000);
  await openApp(page);
  const stdin = await runSkill(page, 'run_python', {
    code: 'import json, sys\ndata = json.load(sys.stdin)\nprint(data["a"] + data["b"])',
    input: { a: 2, b: 40 },
  }, { timeout: 150_000 });
  expect(stdin.output).toBe('42\n');

  await runSkill(page, 'run_python', { code: 'kept = 41' });
  expect((await runSkill(page, 'run_python', { code: 'kept + 1' })).output).toContain('42');

  await page.getByRole('link', { name: 'Settings' }).click();
  await expect(page.getByTestId('python-state')).toContainText('Ready: Pyodide 314');
  const toggle = page.getByRole('checkbox', { name: 'Keep Python variables between runs in a conversation' });
  await expect(toggle).toBeChecked();
  await toggle.uncheck();
  await page.getByRole('link', { name: 'Chat' }).click();
  await runSkill(page, 'run_python', { code: 'fresh = 1' });
  const gone = await runSkill(page, 'run_python', { code: 'fresh' });
  expect(gone.status).toBe('failed');
  expect(gone.output).toMatch(/^NameError: name 'fresh' is not defined \(line 1\)/);

  // The setting survives a reload.
  await page.reload();
  await page.waitForSelector('body[data-ready]');
  await page.getByRole('link', { name: 'Settings' }).click();
  await expect(toggle).not.toBeChecked();
  await toggle.check();
  await page.getByRole('link', { name: 'Chat' }).click();
  await runSkill(page, 'run_python', { code: 'kept = 7' }, { timeout: 150_000 });
  await page.getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('button', { name: 'Restart Python' }).click();
  await expect(page.getByRole('status')).toHaveText('Python was restarted with fresh variables.', { timeout: 150_000 });
  await saveScreenshot(page, 'settings-code');
  await page.getByRole('link', { name: 'Chat' }).click();
  const after = await runSkill(page, 'run_python', { code: 'kept' });
  expect(after.output).toMatch(/^NameError: name 'kept' is not defined/);
});

test('each conversation has a Python of its own: variables, modules and files stay in it', async ({ page }) => {
  test.setTimeout(300_000);
  await openApp(page);
  // Conversation A leaves a variable, a changed and a made-up module, a
  // change to builtins and files where code may write.
  const planted = await runSkill(page, 'run_python', {
    code: [
      'import builtins, json, sys, types',
      'secret = "from A"',
      'json.planted = "from A"',
      'sys.modules["planted"] = types.ModuleType("planted")',
      'builtins.planted = "from A"',
      'open("/tmp/planted.txt", "w").write("from A")',
      'open("/home/pyodide/planted.txt", "w").write("from A")',
      'print("planted")',
    ].join('\n'),
  }, { timeout: 150_000 });
  expect(planted.output).toBe('planted\n');
  const a = await page.locator('li.conversation.selected').getAttribute('data-id');
  expect(a).toBeTruthy();

  // Conversation B sees none of it.
  await page.getByRole('button', { name: 'New chat' }).click();
  const seen = await runSkill(page, 'run_python', {
    code: [
      'import builtins, json, os, sys',
      'print("secret" in globals(), hasattr(json, "planted"), "planted" in sys.modules,',
      '      hasattr(builtins, "planted"), os.path.exists("/tmp/planted.txt"),',
      '      os.path.exists("/home/pyodide/planted.txt"))',
    ].join('\n'),
  }, { timeout: 150_000 });
  expect(seen.status, seen.output).toBe('completed');
  expect(seen.output).toBe('False False False False False False\n');
  expect(await page.locator('li.conversation.selected').getAttribute('data-id')).not.toBe(a);

  // Back in A, all of it is still there.
  await page.locator(`li.conversation[data-id="${a}"] .conversation-open`).click();
  const back = await runSkill(page, 'run_python', {
    code: 'print(secret, json.planted, "planted" in sys.modules, open("/tmp/planted.txt").read())',
  });
  expect(back.output).toBe('from A from A True from A\n');
});
