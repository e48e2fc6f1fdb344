// Running JavaScript from the command bar: values, console output, errors
// with line numbers, timeouts, truncation and files written for download.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import { openApp, saveScreenshot } from '../support/app.mjs';
import { runSkill } from '../support/sandbox.mjs';

test('a snippet returns its value and console output', async ({ page }) => {
  const errors = await openApp(page);
  const cases = [
    [{ code: '1 + 1' }, 'completed', /^VALUE\n2$/],
    [{ code: "console.log('hi', { a: 1 }); console.error('careful'); [1, 2, 3].map((x) => x * 2)" }, 'completed', /^hi \{ a: 1 \}\n\nSTDERR\ncareful\n\nVALUE\n\[ 2, 4, 6 \]$/],
    [{ code: 'await new Promise((r) => setTimeout(r, 10)); return { when: "later", n: 42 }' }, 'completed', /VALUE\n\{ when: "later", n: 42 \}/],
    [{ code: 'input.a + input.b', input: { a: 2, b: 3 } }, 'completed', /VALUE\n5/],
    [{ code: 'let x = 1;\nx = x + 1;\nnotDefined(x);' }, 'failed', /^ReferenceError: notDefined is not defined \(line 3\)\n {4}at snippet\.js:3:1$/],
    [{ code: 'const a = 1;\nconst b = ;\n' }, 'failed', /^SyntaxError: Unexpected token ';' \(line 2\)/],
    [{ code: 'function f() {\n  throw new RangeError("too far");\n}\nf()' }, 'failed', /^RangeError: too far \(line 2\)\n {4}at f \(snippet\.js:2:9\)\n {4}at snippet\.js:4:1/],
    [{ code: 'throw 42' }, 'failed', /^Uncaught: 42/],
  ];
  for (const [args, status, want] of cases) {
    const r = await runSkill(page, 'run_javascript', args);
    expect(r.status, args.code).toBe(status);
    expect(r.output, args.code).toMatch(want);
  }
  await saveScreenshot(page, 'code-javascript');
  expect(errors).toEqual([]);
});

test('a loop that never ends is stopped at its time limit, and the next run works', async ({ page }) => {
  await openApp(page);
  const started = Date.now();
  const r = await runSkill(page, 'run_javascript', { code: 'while (true) {}', timeout_ms: 1500 });
  const took = Date.now() - started;
  expect(r.status).toBe('failed');
  expect(r.output).toBe("timed out after 1.5 s: the run's worker was stopped");
  expect(took).toBeLessThan(5000);
  const next = await runSkill(page, 'run_javascript', { code: '"still " + "here"' });
  expect(next.output).toContain('still here');
});

test('flooding output is cut with a notice, and written files come back as downloads', async ({ page }) => {
  await openApp(page);
  const flood = await runSkill(page, 'run_javascript', { code: "for (let i = 0; i < 100000; i++) console.log('line ' + i)" });
  expect(flood.status).toBe('completed');
  expect(flood.output).toMatch(/line 0\nline 1\n/);
  expect(flood.output).toMatch(/\[… output truncated: [\d.]+ MB more not shown\]/);

  const r = await runSkill(page, 'run_javascript', {
    code: "writeFile('/mnt/out/report.csv', 'a,b\\n1,2\\n'); writeFile('data.bin', new Uint8Array([0, 1, 2, 255])); 'written'",
  });
  expect(r.status).toBe('completed');
  const file = r.card.locator('.code-file[data-file="report.csv"]');
  await expect(file).toContainText('8 B · text/csv');
  const download = page.waitForEvent('download');
  await file.getByRole('button', { name: 'Download report.csv' }).click();
  const saved = await (await download).path();
  expect(fs.readFileSync(saved, 'utf8')).toBe('a,b\n1,2\n');
  await expect(r.card.locator('.code-file[data-file="data.bin"]')).toContainText('4 B');
  await saveScreenshot(page, 'code-javascript-files');

  // The files are kept with the run's card: after a reload they still download.
  await page.reload();
  const kept = page.locator('.result-card').last().locator('.code-file[data-file="data.bin"]');
  const again = page.waitForEvent('download');
  await kept.getByRole('button', { name: 'Download data.bin' }).click();
  expect([...fs.readFileSync(await (await again).path())]).toEqual([0, 1, 2, 255]);
});
