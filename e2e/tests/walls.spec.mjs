// The small walls a person meets in daily use, each gone: examples that
// run, form errors that go once fixed, a Save that warns after a failed
// connection test, a wrong step limit said so, each place opening at its
// top, memory and task editing by keyboard, switching a refused skill on
// from its card, Skills by keyboard, integration skills off by default,
// long text in Activity's detail, a provider's own model name as the
// example, and a quiet console on a clean load of every place.
import { test, expect } from '@playwright/test';
import { openApp, runCommand, saveScreenshot } from '../support/app.mjs';
import { freePort } from '../support/mcp.mjs';

const PLACES = ['chat', 'notes', 'tasks', 'memory', 'skills', 'servers', 'activity', 'settings'];

async function run(page, line) {
  const n = await page.locator('.result-card').count();
  await runCommand(page, line);
  await expect(page.locator('.result-card')).toHaveCount(n + 1);
  return page.locator('.result-card').nth(n);
}

test('the first screen\'s examples are buttons that run their command', async ({ page }) => {
  const errors = await openApp(page);
  const examples = page.getByRole('list', { name: 'Examples' }).getByRole('button');
  await expect(examples).toHaveCount(3);
  await examples.filter({ hasText: '/calc 15% of 847' }).click();
  const card = page.locator('.result-card').first();
  await expect(card).toHaveAttribute('data-status', 'completed');
  await expect(card.locator('.card-output')).toContainText('127.05');
  await expect(page.getByRole('textbox', { name: 'Message or command' })).toBeFocused();
  expect(errors).toEqual([]);
});

test('provider form errors go once fixed or once the provider changes, and Save asks after a failed test', async ({ page }) => {
  await openApp(page, 'settings');
  const provider = page.getByRole('combobox', { name: 'Provider' });
  const url = page.getByRole('textbox', { name: 'Base URL' });
  const modelField = page.getByRole('textbox', { name: 'Model' });
  const problems = page.locator('.problems');

  await provider.selectOption({ label: 'Custom (OpenAI-compatible)' });
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await expect(problems).toContainText("Enter the server's base URL");
  await expect(problems).toContainText('Pick a model.');
  // Each problem goes as its field is fixed.
  await url.fill('http://localhost:9/v1');
  await expect(problems).not.toContainText("Enter the server's base URL");
  await expect(problems).toContainText('Pick a model.');
  await modelField.fill('some-model');
  await expect(problems).toHaveCount(0);
  // Another provider starts without the last one's problems.
  await url.fill('');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await expect(problems).toContainText("Enter the server's base URL");
  await provider.selectOption({ label: 'LM Studio' });
  await expect(problems).toHaveCount(0);

  // A connection test that fails, then Save: asked first, nothing stored.
  const closed = await freePort();
  await provider.selectOption({ label: 'Custom (OpenAI-compatible)' });
  await url.fill(`http://127.0.0.1:${closed}/v1`);
  await modelField.fill('some-model');
  await page.getByRole('button', { name: 'Test connection' }).click();
  const failure = page.locator('.provider-form .provider-error');
  await expect(failure).toBeVisible({ timeout: 15_000 });
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  const question = page.locator('.confirm-save');
  await expect(question).toContainText('The connection test just failed with these settings');
  await saveScreenshot(page, 'walls-save-after-failed-test');
  await expect(page.getByText(/^In use:/)).toHaveCount(0);
  await question.getByRole('button', { name: 'Cancel' }).click();
  await expect(question).toHaveCount(0);
  await expect(page.getByText(/^In use:/)).toHaveCount(0);

  // Changing what was tested clears the failure and the question.
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await expect(question).toBeVisible();
  await url.fill(`http://127.0.0.1:${closed}/v2`);
  await expect(question).toHaveCount(0);
  await expect(failure).toHaveCount(0);

  // Asked again after another failed test, Save anyway stores it.
  await page.getByRole('button', { name: 'Test connection' }).click();
  await expect(failure).toBeVisible({ timeout: 15_000 });
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await question.getByRole('button', { name: 'Save anyway' }).click();
  await expect(page.getByText(/^In use:/)).toContainText('some-model');
});

test('a provider suggests a model it serves', async ({ page }) => {
  await openApp(page, 'settings');
  const provider = page.getByRole('combobox', { name: 'Provider' });
  const modelField = page.getByRole('textbox', { name: 'Model' });
  await provider.selectOption({ label: 'OpenAI' });
  await expect(modelField).toHaveAttribute('placeholder', /^e\.g\. gpt-/);
  await provider.selectOption({ label: 'Anthropic' });
  await expect(modelField).toHaveAttribute('placeholder', /^e\.g\. claude-/);
  await provider.selectOption({ label: 'Ollama' });
  await expect(modelField).toHaveAttribute('placeholder', /^e\.g\. llama3\.2/);
});

test('a wrong number of steps per turn is said so and not stored', async ({ page }) => {
  await openApp(page, 'settings');
  const steps = page.getByRole('spinbutton', { name: 'Steps per turn' });
  await expect(steps).toHaveValue('10');
  await steps.fill('-5');
  await steps.press('Tab');
  await expect(page.getByText('Steps per turn must be a whole number from 1 to 100.')).toBeVisible();
  await expect(steps).toHaveValue('-5');
  await expect(steps).toHaveAttribute('aria-invalid', 'true');
  await page.reload();
  await page.waitForSelector('body[data-ready]');
  await expect(page.getByRole('spinbutton', { name: 'Steps per turn' })).toHaveValue('10');
  await page.getByRole('spinbutton', { name: 'Steps per turn' }).fill('12');
  await page.getByRole('spinbutton', { name: 'Steps per turn' }).press('Tab');
  await expect(page.getByText('Steps per turn must be')).toHaveCount(0);
  await page.waitForTimeout(300);
  await page.reload();
  await page.waitForSelector('body[data-ready]');
  await expect(page.getByRole('spinbutton', { name: 'Steps per turn' })).toHaveValue('12');
});

test('each place opens at its top', async ({ page }) => {
  await page.setViewportSize({ width: 1000, height: 500 });
  await openApp(page, 'skills');
  const content = page.locator('main.content');
  await expect(page.locator('.tier').first()).toBeVisible();
  await content.evaluate((el) => { el.scrollTop = el.scrollHeight; });
  expect(await content.evaluate((el) => el.scrollTop)).toBeGreaterThan(200);
  await page.getByRole('link', { name: 'Settings' }).click();
  await expect(page.getByRole('heading', { name: 'Settings', level: 1 })).toBeVisible();
  expect(await content.evaluate((el) => el.scrollTop)).toBe(0);
  await content.evaluate((el) => { el.scrollTop = el.scrollHeight; });
  await page.getByRole('link', { name: 'Activity' }).click();
  await expect(page.getByRole('heading', { name: 'Activity', level: 1 })).toBeVisible();
  expect(await content.evaluate((el) => el.scrollTop)).toBe(0);
});

test('a memory is edited by keyboard: Edit focuses the field, Enter saves, Esc and Cancel leave it', async ({ page }) => {
  await openApp(page, 'memory');
  await page.getByRole('textbox', { name: 'Something to remember' }).fill('I prefer tea');
  await page.getByRole('button', { name: 'Remember' }).click();
  const item = page.locator('.memory-item').first();
  await expect(item).toContainText('I prefer tea');

  await item.getByRole('button', { name: 'Edit' }).click();
  const field = page.getByRole('textbox', { name: 'Edit memory' });
  await expect(field).toBeFocused();
  await field.fill('I prefer green tea');
  await field.press('Enter');
  await expect(field).toHaveCount(0);
  await expect(page.locator('.memory-item').first()).toContainText('I prefer green tea');

  await page.locator('.memory-item').first().getByRole('button', { name: 'Edit' }).click();
  await expect(field).toBeFocused();
  await field.fill('something else');
  await field.press('Escape');
  await expect(field).toHaveCount(0);
  await expect(page.locator('.memory-item').first()).toContainText('I prefer green tea');
  await expect(page.locator('.memory-item').first().getByRole('button', { name: 'Edit' })).toBeFocused();

  await page.locator('.memory-item').first().getByRole('button', { name: 'Edit' }).click();
  await field.fill('and another');
  await page.locator('.memory-item').first().getByRole('button', { name: 'Cancel' }).click();
  await expect(page.locator('.memory-item').first()).toContainText('I prefer green tea');
});

test('a task is edited in its row (title, due date, priority) and shows its tags', async ({ page }) => {
  await openApp(page);
  await run(page, '/task Renew the passport #travel #documents');
  await page.getByRole('link', { name: 'Tasks' }).click();
  const row = page.locator('.task').first();
  await expect(row.getByRole('list', { name: 'Tags' })).toContainText('#travel');
  await expect(row.getByRole('list', { name: 'Tags' })).toContainText('#documents');

  await row.getByRole('button', { name: 'Edit Renew the passport' }).click();
  const title = row.getByRole('textbox', { name: 'Title' });
  await expect(title).toBeFocused();
  await title.fill('Renew both passports');
  await row.getByLabel('Due date').fill('2031-05-04');
  await row.getByRole('combobox', { name: 'Priority' }).selectOption('high');
  await row.getByRole('button', { name: 'Save' }).click();
  const edited = page.locator('.task').first();
  await expect(edited.locator('.task-title')).toHaveText('Renew both passports');
  await expect(edited).toContainText('Due 2031-05-04');
  await expect(edited).toContainText('High');
  await expect(edited.getByRole('list', { name: 'Tags' })).toContainText('#travel');

  // Enter saves; Esc leaves it as it was.
  await edited.getByRole('button', { name: 'Edit Renew both passports' }).click();
  await edited.getByRole('textbox', { name: 'Title' }).fill('Renew the passports');
  await edited.getByRole('textbox', { name: 'Title' }).press('Enter');
  await expect(page.locator('.task-title').first()).toHaveText('Renew the passports');
  await page.locator('.task').first().getByRole('button', { name: /^Edit / }).click();
  await page.locator('.task').first().getByLabel('Due date').fill('');
  await page.locator('.task').first().getByRole('textbox', { name: 'Title' }).press('Escape');
  await expect(page.locator('.task').first()).toContainText('Due 2031-05-04');
  await saveScreenshot(page, 'walls-task-tags');
});

test('a network skill refused as off offers Enable, which switches it on and still asks', async ({ page }) => {
  const errors = await openApp(page);
  const card = await run(page, '/web_fetch https://example.com/');
  await expect(card).toHaveAttribute('data-status', 'denied');
  const enable = card.getByRole('button', { name: 'Enable Web fetch' });
  await expect(enable).toBeVisible();
  await saveScreenshot(page, 'walls-enable-offer');
  await enable.click();
  await expect(card.locator('.enable-offer')).toContainText('Web fetch is on. It still asks before each call');

  // The same setting as its switch in Skills, with the approval untouched.
  await page.getByRole('link', { name: 'Skills' }).click();
  await expect(page.getByRole('switch', { name: 'Enable Web fetch' })).toBeChecked();
  await expect(page.getByRole('combobox', { name: 'Approval for Web fetch' })).toHaveValue('');

  // Run again: it asks, it is not approved by the offer.
  await page.getByRole('link', { name: 'Chat' }).click();
  await runCommand(page, '/web_fetch https://example.com/');
  const asking = page.locator('.approval-inline');
  await expect(asking).toBeVisible();
  await asking.getByRole('button', { name: 'Deny' }).click();
  await expect(page.locator('.result-card').last()).toHaveAttribute('data-status', 'denied');
  // Denied by the person, not off: no offer on that card.
  await expect(page.locator('.result-card').last().getByRole('button', { name: /^Enable / })).toHaveCount(0);
  expect(errors).toEqual([]);
});

test('Skills by keyboard: a filter that goes to its first skill, and arrows between skills', async ({ page }) => {
  await openApp(page, 'skills');
  const filter = page.getByRole('searchbox', { name: 'Find a skill' });
  await filter.fill('fetch');
  await expect(page.locator('li.skill:visible')).toHaveCount(1);
  await expect(page.locator('li.skill:visible')).toHaveAttribute('data-skill', 'web_fetch');
  await filter.press('Enter');
  await expect(page.getByRole('switch', { name: 'Enable Web fetch' })).toBeFocused();
  await filter.fill('no such skill at all');
  await expect(page.getByText('No skill matches “no such skill at all”.')).toBeVisible();
  await filter.fill('');

  // Tab from the filter reaches a network skill in a few stops: each list
  // of skills is one row's stops, not every row's.
  await filter.focus();
  let presses = 0;
  for (; presses < 40; presses++) {
    await page.keyboard.press('Tab');
    const on = await page.evaluate(() => document.activeElement?.getAttribute('aria-label'));
    if (on === 'Enable Web fetch' || on === 'Enable Web search') break;
  }
  expect(presses).toBeLessThan(20);

  // Arrows move between the skills of a list, to the same control.
  const core = page.getByRole('list', { name: 'Core skills' });
  const first = core.locator('li.skill').first();
  await first.getByRole('switch').focus();
  await page.keyboard.press('ArrowDown');
  await expect(core.locator('li.skill').nth(1).getByRole('switch')).toBeFocused();
  await page.keyboard.press('End');
  await expect(core.locator('li.skill').last().getByRole('switch')).toBeFocused();
  await page.keyboard.press('Home');
  await expect(first.getByRole('switch')).toBeFocused();
  // Only the row in use is in the Tab order.
  await expect(core.locator('li.skill').nth(1).getByRole('switch')).toHaveAttribute('tabindex', '-1');
  await expect(first.getByRole('switch')).not.toHaveAttribute('tabindex', '-1');
});

test('integration skills are off until switched on, as their text says', async ({ page }) => {
  await openApp(page, 'skills');
  const integration = page.locator('.tier[data-tier="integration"]');
  await expect(integration).toContainText('Off until you enable them');
  const allow = page.getByRole('switch', { name: 'Allow integration skills' });
  await expect(allow).not.toBeChecked();
  await allow.check();
  await expect(allow).toBeChecked();
  await page.reload();
  await page.waitForSelector('body[data-ready]');
  await expect(page.getByRole('switch', { name: 'Allow integration skills' })).toBeChecked();
});

test("Activity's detail wraps long text inside the dialog", async ({ page }) => {
  await page.setViewportSize({ width: 800, height: 700 });
  await openApp(page);
  const long = `https://example.com/${'a-very-long-path-segment-'.repeat(30)}end`;
  await run(page, `/note Reading list\n${long}`);
  await page.getByRole('link', { name: 'Activity' }).click();
  await page.locator('tr.log-row').first().click();
  const dialog = page.getByRole('dialog');
  await expect(dialog).toBeVisible();
  await dialog.getByText('Show the log record').click();
  const outside = await dialog.evaluate((d) => {
    const box = d.getBoundingClientRect();
    const out = [];
    if (d.scrollWidth > d.clientWidth + 1) out.push(`the dialog scrolls sideways (${d.scrollWidth} > ${d.clientWidth})`);
    for (const el of d.querySelectorAll('*')) {
      const r = el.getBoundingClientRect();
      if (r.width > 0 && r.right > box.right + 1) out.push(`${el.tagName.toLowerCase()}.${el.className} ends at ${Math.round(r.right)} > ${Math.round(box.right)}`);
    }
    return out.slice(0, 5);
  });
  await saveScreenshot(page, 'walls-activity-detail-long');
  expect(outside).toEqual([]);
});

/** The browser's report of the sandbox's own policy proof (public/sandbox/host.html). */
function isSandboxPolicyProof(text) {
  return text.includes('data:,hearth-policy-probe') && text.includes('Content Security Policy');
}

test('a clean load of every place writes no errors to the console', async ({ browser, baseURL }) => {
  test.setTimeout(120_000);
  for (const place of PLACES) {
    // A fresh profile each time: the first visit is the one that probes
    // for local model servers and starts the sandbox.
    const context = await browser.newContext({ baseURL });
    const page = await context.newPage();
    const said = [];
    page.on('console', (m) => {
      // The sandbox proves its Content-Security-Policy holds by fetching a
      // data: URL that only that policy refuses; the browser reports the
      // refusal it was meant to cause, and nothing else may appear.
      if (m.type() === 'error' && !isSandboxPolicyProof(m.text())) said.push(`${place}: ${m.text()}`);
    });
    page.on('pageerror', (e) => said.push(`${place}: ${e.message}`));
    await openApp(page, place);
    await expect(page.locator('main h1, main h2').first()).toBeVisible();
    // The sandbox starts, and the local look finishes, shortly after.
    await page.waitForTimeout(4_000);
    expect(said).toEqual([]);
    await context.close();
  }
});
