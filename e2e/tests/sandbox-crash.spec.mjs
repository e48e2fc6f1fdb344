// A JavaScript heap bomb exhausts V8's heap, which ends the process the
// sandbox runs in (Chromium puts the opaque-origin iframe in a process of
// its own). The app must say so within seconds and keep working. Playwright
// treats any crashed frame as a crashed page and refuses to touch it, so
// after the bomb the page is driven through a raw CDP session.
import { test, expect } from '@playwright/test';
import { openApp } from '../support/app.mjs';
import { rawPage, runSkill } from '../support/sandbox.mjs';

test('a memory bomb crashes only the sandbox; the app reports it and runs the next snippet', async ({ browser, baseURL }) => {
  test.setTimeout(240_000);
  const context = await browser.newContext({ baseURL });
  const page = await context.newPage();
  await openApp(page);
  const warm = await runSkill(page, 'run_javascript', { code: '1 + 1' });
  expect(warm.status).toBe('completed');
  const raw = await rawPage(browser, baseURL);

  const started = Date.now();
  const bomb = await raw.runSkill('run_javascript', {
    code: 'const hoard = []; for (;;) hoard.push(new Array(1e6).fill(1.5))',
    timeout_ms: 60000,
  });
  const took = Date.now() - started;
  expect(bomb).toEqual({
    status: 'failed',
    output: 'the sandbox crashed (a run may have used more memory than the browser allows), so it was restarted; any Python variables are gone',
  });
  // Reported well before the run's own 60 s limit.
  expect(took).toBeLessThan(30_000);

  expect(await raw.runSkill('run_javascript', { code: '6 * 7' })).toEqual({ status: 'completed', output: 'VALUE\n42' });
  const python = await raw.runSkill('run_python', { code: 'print(sum(range(10)))' });
  expect(python).toEqual({ status: 'completed', output: '45\n' });
  // The app's own page never went away.
  expect(await raw.evaluate(() => document.body.dataset.ready)).toBe('true');
  await context.close().catch(() => {});
});
