// Switches, badges and settings that say what is true: the network tier's
// switch, the Denied badge, a custom provider's URL, the look for local
// model servers made once and remembered, and Notes in the same column as
// every other page.
import { test, expect } from '@playwright/test';
import { openApp, runCommand } from '../support/app.mjs';

const tierSwitch = (page) => page.getByRole('switch', { name: 'Allow network skills' });
const skillSwitch = (page, name) => page.getByRole('switch', { name: `Enable ${name}` });

test('"Allow network skills" is on only while a network skill can run', async ({ page }) => {
  await openApp(page, 'skills');
  // Both network skills start off, so the tier switch does too.
  await expect(skillSwitch(page, 'Web fetch')).not.toBeChecked();
  await expect(skillSwitch(page, 'Web search')).not.toBeChecked();
  await expect(tierSwitch(page)).not.toBeChecked();

  // Turning it on turns on the skills it stands for.
  await tierSwitch(page).click();
  await expect(tierSwitch(page)).toBeChecked();
  await expect(skillSwitch(page, 'Web fetch')).toBeChecked();
  await expect(skillSwitch(page, 'Web search')).toBeChecked();

  // With one skill left on, the tier is still on; with none, it is off.
  await skillSwitch(page, 'Web fetch').click();
  await expect(skillSwitch(page, 'Web fetch')).not.toBeChecked();
  await expect(tierSwitch(page)).toBeChecked();
  await skillSwitch(page, 'Web search').click();
  await expect(tierSwitch(page)).not.toBeChecked();

  // Off blocks the tier: its skills read off and cannot be switched on one
  // by one; on again brings back what was on, and only that.
  await skillSwitch(page, 'Web search').click();
  await expect(tierSwitch(page)).toBeChecked();
  await tierSwitch(page).click();
  await expect(tierSwitch(page)).not.toBeChecked();
  await expect(skillSwitch(page, 'Web search')).not.toBeChecked();
  await expect(skillSwitch(page, 'Web search')).toBeDisabled();
  await tierSwitch(page).click();
  await expect(skillSwitch(page, 'Web search')).toBeChecked();
  await expect(skillSwitch(page, 'Web fetch')).not.toBeChecked();

  // What the switches say is what is stored: a reload shows the same.
  await page.reload();
  await page.waitForSelector('body[data-ready]');
  await expect(tierSwitch(page)).toBeChecked();
  await expect(skillSwitch(page, 'Web search')).toBeChecked();
  await expect(skillSwitch(page, 'Web fetch')).not.toBeChecked();
});

test('a denied call has its own badge, unlike a failure or a wait for approval', async ({ page }) => {
  await openApp(page, 'skills');
  await page.getByRole('combobox', { name: 'Approval for Calculator' }).selectOption('never-allow');
  await page.getByRole('link', { name: 'Chat' }).click();
  await runCommand(page, '/calc 2+2');
  const badge = page.locator('.result-card[data-status="denied"] .status');
  await expect(badge).toHaveText('Denied');
  const colours = await badge.evaluate((el) => {
    // The colours a variable stands for, as the browser computes them.
    const resolve = (v) => {
      const probe = document.createElement('span');
      probe.style.color = `var(${v})`;
      document.body.append(probe);
      const c = getComputedStyle(probe).color;
      probe.remove();
      return c;
    };
    const s = getComputedStyle(el);
    return {
      badge: [s.backgroundColor, s.color],
      waiting: [resolve('--warn-soft'), resolve('--warn')],
      failed: [resolve('--bad-soft'), resolve('--bad')],
    };
  });
  expect(colours.badge).not.toEqual(colours.waiting);
  expect(colours.badge).not.toEqual(colours.failed);
  expect(colours.badge[0]).not.toEqual(colours.waiting[0]);
  expect(colours.badge[0]).not.toEqual(colours.failed[0]);
});

test('a custom provider starts with an empty URL', async ({ page }) => {
  await openApp(page, 'settings');
  const provider = page.getByRole('combobox', { name: 'Provider' });
  const url = page.getByRole('textbox', { name: 'Base URL' });
  await expect(provider).toHaveValue('ollama');
  await expect(url).toHaveValue('http://localhost:11434/v1');
  await provider.selectOption({ label: 'Custom (OpenAI-compatible)' });
  await expect(url).toHaveValue('');
  await expect(url).toHaveAttribute('placeholder', /^e\.g\. /);
  // A preset brings its own URL back; the other custom kind starts empty too.
  await provider.selectOption({ label: 'LM Studio' });
  await expect(url).toHaveValue('http://localhost:1234/v1');
  await provider.selectOption({ label: 'Custom (Anthropic)' });
  await expect(url).toHaveValue('');
  // Saving without a URL is refused with a reason, not stored.
  await page.getByRole('textbox', { name: 'Model' }).fill('some-model');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.locator('.problems')).toContainText("Enter the server's base URL");
  await expect(page.getByText(/^In use:/)).toHaveCount(0);
});

test('the look for local model servers asks hearth serve which listen, is remembered, and made again on request', async ({ page }) => {
  const PORTS = { ollama: '11434', lmstudio: '1234', llamacpp: '8080' };
  const LOCAL = /^http:\/\/localhost:(11434|1234|8080)\//;
  const asked = [];
  const answers = [];
  page.on('request', (r) => {
    if (LOCAL.test(r.url())) asked.push(new URL(r.url()).port);
  });
  page.on('response', (r) => {
    // Read at once: a reload drops the bodies of earlier responses.
    if (new URL(r.url()).pathname === '/api/local-servers') {
      answers.push(r.json().then((body) => ({ status: r.status(), body })));
    }
  });
  const line = page.getByTestId('local-servers');
  // The browser fetches exactly the ports hearth serve found listening:
  // none where nothing listens, so no refused connection in the console.
  const fetchedOnlyListed = async () => {
    const said = (await Promise.all(answers)).map(({ status, body }) => {
      expect(status).toBe(200);
      return body.listening;
    });
    const listed = new Set(said.flat().map((id) => PORTS[id]));
    for (const id of said.flat()) expect(Object.keys(PORTS)).toContain(id);
    expect(new Set(asked)).toEqual(listed);
  };

  // The first start asks hearth serve once.
  await openApp(page, 'settings');
  await expect(line).toContainText('when Hearth last looked');
  expect(answers.length).toBe(1);
  await fetchedOnlyListed();
  const first = asked.length;

  // Loads after that ask nothing and say what was found, and when.
  for (let i = 0; i < 2; i++) {
    await page.reload();
    await page.waitForSelector('body[data-ready]');
    await expect(line).toContainText('when Hearth last looked');
    await page.getByRole('link', { name: 'Chat' }).click();
    await page.waitForTimeout(500);
    await page.getByRole('link', { name: 'Settings' }).click();
  }
  expect(answers.length).toBe(1);
  expect(asked.length).toBe(first);

  // "Look again" asks once more and remembers the new answer.
  await page.getByRole('button', { name: 'Look again' }).click();
  await expect(line).toContainText('when Hearth last looked');
  await expect.poll(() => answers.length).toBe(2);
  await page.reload();
  await page.waitForSelector('body[data-ready]');
  await expect(line).toContainText('when Hearth last looked');
  await page.waitForTimeout(500);
  expect(answers.length).toBe(2);
  await fetchedOnlyListed();
});

test('Notes sits in the same centred column as the other pages', async ({ page }) => {
  await openApp(page);
  await runCommand(page, '/note Groceries\nmilk and eggs');
  await expect(page.locator('.result-card').last()).toHaveAttribute('data-status', 'completed');
  const column = async (place) => {
    await page.getByRole('link', { name: place }).click();
    const box = await page.locator('section.page').boundingBox();
    return { x: Math.round(box.x), width: Math.round(box.width) };
  };
  const skills = await column('Skills');
  const tasks = await column('Tasks');
  const notes = await column('Notes');
  expect(tasks).toEqual(skills);
  expect(notes).toEqual(skills);
});
