// Stop: a runaway JavaScript or Python run ends when the person says so —
// the Stop button, or Esc in the composer — long before its time limit.
// Python is interrupted where the page is cross-origin isolated (as under
// `hearth serve`) and keeps its variables; a model's code call has Stop on
// its card. The time limits themselves are settings.
import { test, expect } from '@playwright/test';
import { openApp, runCommand, saveScreenshot } from '../support/app.mjs';
import { runSkill } from '../support/sandbox.mjs';
import { say, startFakeModel, useProvider } from '../support/model.mjs';

const composer = (page) => page.getByRole('textbox', { name: 'Message or command' });

/// Starts `/skill {args}` and returns once its run is under way (the
/// composer offers Stop), with the card that will hold its result.
async function startRun(page, skill, args) {
  const cards = page.locator('.result-card');
  const before = await cards.count();
  await runCommand(page, `/${skill} ${JSON.stringify(args)}`);
  await expect(page.locator('.composer').getByRole('button', { name: 'Stop' })).toBeVisible({ timeout: 150_000 });
  return cards.nth(before);
}

async function resultOf(card) {
  await card.waitFor();
  return { status: await card.getAttribute('data-status'), output: await card.locator('.card-answer').innerText() };
}

test('a runaway JavaScript loop stops at once with Esc in the composer, and the next run works', async ({ page }) => {
  const errors = await openApp(page);
  const card = await startRun(page, 'run_javascript', { code: 'while (true) {}', timeout_ms: 60_000 });
  await saveScreenshot(page, 'stop-javascript-running');
  const started = Date.now();
  await composer(page).press('Escape');
  const r = await resultOf(card);
  // Stopped by the person, not by its 60 s limit.
  expect(Date.now() - started).toBeLessThan(10_000);
  expect(r.status).toBe('failed');
  expect(r.output).toBe("stopped by you: the run's worker was ended");
  await expect(page.locator('.composer').getByRole('button', { name: 'Stop' })).toHaveCount(0);
  const next = await runSkill(page, 'run_javascript', { code: '"still " + "here"' });
  expect(next.output).toContain('still here');
  expect(errors).toEqual([]);
});

test('a runaway Python loop is interrupted by Stop and keeps its variables', async ({ page }) => {
  test.setTimeout(240_000);
  const errors = await openApp(page);
  expect(await page.evaluate(() => self.crossOriginIsolated)).toBe(true);
  const first = await runSkill(page, 'run_python', { code: 'x = 41' }, { timeout: 150_000 });
  expect(first.status, first.output).toBe('completed');

  const card = await startRun(page, 'run_python', { code: 'n = 0\nwhile True:\n    n += 1', timeout_ms: 120_000 });
  await saveScreenshot(page, 'stop-python-running');
  const started = Date.now();
  await page.locator('.composer').getByRole('button', { name: 'Stop' }).click();
  const r = await resultOf(card);
  expect(Date.now() - started).toBeLessThan(20_000);
  expect(r.status).toBe('failed');
  expect(r.output).toBe('stopped by you: Python was interrupted (KeyboardInterrupt); variables from earlier runs are kept');
  await saveScreenshot(page, 'stop-python-stopped');

  // The interpreter is the same one: the variables from before and the
  // loop's own counter are there.
  const after = await runSkill(page, 'run_python', { code: 'print(x + 1, n > 0)' });
  expect(after.status, after.output).toBe('completed');
  expect(after.output).toBe('42 True\n');
  expect(errors).toEqual([]);
});

test("a model's runaway code call has Stop on its card, and the reply goes on", async ({ page }) => {
  test.setTimeout(120_000);
  const model = await startFakeModel('runaway.json');
  try {
    await openApp(page, 'settings');
    await useProvider(page, model.base);
    await page.getByRole('link', { name: 'Chat' }).click();
    await say(page, 'Please run a loop');
    const card = page.locator('.tool-card[data-skill="run_javascript"]');
    await expect(card).toHaveAttribute('data-state', 'running', { timeout: 30_000 });
    const stop = card.getByRole('button', { name: 'Stop' });
    await expect(stop).toBeVisible();
    await saveScreenshot(page, 'stop-tool-card');
    await stop.click();
    await expect(card).toHaveAttribute('data-state', 'failed', { timeout: 10_000 });
    await expect(card).toContainText("stopped by you: the run's worker was ended");
    await expect(stop).toHaveCount(0);
    await expect(page.locator('.message.assistant').last()).toContainText(/The run came back with: (failed: )?stopped by you/);
  } finally {
    await model.stop();
  }
});

test('the time limits are settings: a run that names none stops at the limit set', async ({ page }) => {
  await openApp(page, 'settings');
  const limit = page.getByRole('spinbutton', { name: 'JavaScript time limit (seconds)' });
  await expect(limit).toHaveValue('10');
  await expect(page.getByRole('spinbutton', { name: 'Python time limit (seconds)' })).toHaveValue('30');

  // Out of bounds: said so, and nothing changes.
  await limit.fill('-3');
  await limit.press('Tab');
  await expect(page.getByText('The JavaScript time limit must be a whole number of seconds from 1 to 60.')).toBeVisible();
  await expect(limit).toHaveAttribute('aria-invalid', 'true');

  await limit.fill('2');
  await limit.press('Tab');
  await expect(page.getByText('JavaScript runs now stop after 2.0 s.')).toBeVisible();
  await expect(limit).not.toHaveAttribute('aria-invalid', 'true');

  // Kept across a reload, and used.
  await page.reload();
  await page.waitForSelector('body[data-ready]');
  await expect(page.getByRole('spinbutton', { name: 'JavaScript time limit (seconds)' })).toHaveValue('2');
  await page.getByRole('link', { name: 'Chat' }).click();
  const started = Date.now();
  const r = await runSkill(page, 'run_javascript', { code: 'while (true) {}' });
  expect(r.output).toBe("timed out after 2.0 s: the run's worker was stopped");
  expect(Date.now() - started).toBeLessThan(9_000);
});
