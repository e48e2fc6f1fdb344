// The first hour with Hearth, as a newcomer meets it: commands in plain
// words, a form that opens on what was typed, results in words, input that
// is never lost, and the keyboard. Each test stands for one wall a
// newcomer hit.
import { test, expect } from '@playwright/test';
import { openApp, runCommand, saveScreenshot } from '../support/app.mjs';
import { startFakeModel, useProvider, say } from '../support/model.mjs';

const composer = (page) => page.getByRole('textbox', { name: 'Message or command' });
const lastCard = (page) => page.locator('.result-card').last();
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-/i;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/// Tomorrow as the cards write dates: "25 Nov 2026".
function tomorrowInWords() {
  const d = new Date();
  d.setDate(d.getDate() + 1);
  return `${d.getDate()} ${MONTHS[d.getMonth()]} ${d.getFullYear()}`;
}

/// Runs a line and waits for a new card to finish.
async function runAndWait(page, line) {
  const before = await page.locator('.result-card').count();
  await runCommand(page, line);
  await expect(page.locator('.result-card')).toHaveCount(before + 1);
  return lastCard(page);
}

test('built-ins take plain words: a note, a task, a memory, /notes alone, /read_file alone, and /help shows real examples', async ({ page }) => {
  const errors = await openApp(page);
  let card = await runAndWait(page, '/note Buy milk and eggs');
  await expect(card).toHaveAttribute('data-status', 'completed');
  await expect(card.locator('.card-output')).toHaveText('Created note "Buy milk and eggs".');

  card = await runAndWait(page, '/task Renew passport tomorrow !high');
  await expect(card).toHaveAttribute('data-status', 'completed');
  await expect(card.locator('.card-output')).toHaveText(`Added task "Renew passport", due ${tomorrowInWords()}, high priority.`);

  card = await runAndWait(page, '/remember I prefer metric units');
  await expect(card.locator('.card-output')).toHaveText('Remembered: I prefer metric units');

  card = await runAndWait(page, '/notes');
  await expect(card).toHaveAttribute('data-status', 'completed');
  await expect(card.locator('.card-output')).toHaveText('1 note:\nBuy milk and eggs');

  // With nothing granted, /read_file lists the grants and says there are none.
  card = await runAndWait(page, '/read_file');
  await expect(card).toHaveAttribute('data-skill', 'list_files');
  await expect(card.locator('.card-output')).toContainText(/no files or folders are granted/i);

  // /help <skill> shows lines a person can type, each of which runs.
  await composer(page).fill('/help tasks');
  await composer(page).press('Enter');
  const help = page.getByRole('region', { name: 'Help: Tasks' });
  await expect(help).toBeVisible();
  await expect(help.locator('dt code').first()).toHaveText(/^\/task /);
  const example = (await help.locator('.help-example code').first().textContent()).trim();
  expect(example).toBe('/task Renew passport tomorrow !high');
  await saveScreenshot(page, 'help-tasks');
  await help.locator('.help-example button').nth(1).click();
  await expect(composer(page)).toHaveValue('/task Pay rent by March 1 #home');
  await expect(composer(page)).toBeFocused();
  await composer(page).press('Enter');
  await expect(page.locator('.result-card')).toHaveCount(6);
  await expect(lastCard(page)).toHaveAttribute('data-status', 'completed');
  await expect(lastCard(page).locator('.card-output')).toContainText(/^Added task "Pay rent", due 1 Mar 20\d\d\.$/);

  // A mistyped command keeps the line and says what was meant.
  await composer(page).fill('/calx 2+2');
  await composer(page).press('Enter');
  await expect(page.locator('.composer .inline-error')).toHaveText('unknown command /calx. Did you mean /calculator?');
  await expect(composer(page)).toHaveValue('/calx 2+2');

  // The panels hold what the words made.
  await page.getByRole('link', { name: 'Tasks' }).click();
  await expect(page.locator('.task').filter({ hasText: 'Renew passport' })).toContainText('High');
  await page.getByRole('link', { name: 'Memory' }).click();
  await expect(page.getByText('I prefer metric units')).toBeVisible();
  expect(errors).toEqual([]);
});

test('the skill form opens on what was typed', async ({ page }) => {
  await openApp(page);
  // Free text without a model: the found skill's form carries the text.
  await composer(page).fill('jot down an idea for the garden');
  await expect(page.getByRole('listbox', { name: 'Matching skills' })).toBeVisible();
  await composer(page).press('Enter');
  let dialog = page.getByRole('dialog', { name: 'Notes' });
  await expect(dialog).toBeVisible();
  // "jot down" chose the note; the rest is its title.
  await expect(dialog.getByLabel('Title')).toHaveValue('an idea for the garden');
  await saveScreenshot(page, 'skill-form');
  await dialog.getByRole('button', { name: 'Run' }).click();
  await expect(lastCard(page).locator('.card-output')).toHaveText('Created note "an idea for the garden".');
  await expect(composer(page)).toHaveValue('');

  // A command that needs more opens its form with what its words set.
  await composer(page).fill('/note');
  await composer(page).press('Enter');
  dialog = page.getByRole('dialog', { name: 'Notes' });
  await expect(dialog).toBeVisible();
  await expect(page.locator('.composer .notice')).toHaveText('/note needs more: fill in the form.');
  await dialog.getByLabel('Title').fill('From the form');
  await dialog.getByRole('button', { name: 'Run' }).click();
  await expect(lastCard(page).locator('.card-output')).toHaveText('Created note "From the form".');
  await expect(composer(page)).toHaveValue('');
});

test('Settings scrolls inside the app: the page never grows past the window', async ({ page }) => {
  await openApp(page, 'settings');
  await page.mouse.move(700, 400);
  for (let i = 0; i < 30; i++) await page.mouse.wheel(0, 600);
  const sizes = await page.evaluate(() => ({
    scrollY: window.scrollY,
    height: document.scrollingElement.scrollHeight,
    window: window.innerHeight,
    content: document.querySelector('main.content').scrollTop,
  }));
  expect(sizes.scrollY).toBe(0);
  expect(sizes.height).toBeLessThanOrEqual(sizes.window);
  expect(sizes.content).toBeGreaterThan(0);
  await expect(page.getByRole('button', { name: 'Download backup' })).toBeInViewport();
});

test('results read as words: no ids or markup in cards', async ({ page }) => {
  await openApp(page);
  const card = await runAndWait(page, '/tasks {"action":"create","title":"Renew passport","due":"2030-01-15","priority":"high"}');
  const output = await card.locator('.card-output').textContent();
  expect(output).not.toMatch(UUID);
  expect(output).not.toContain('[ ]');
  await expect(card.locator('.card-output')).toHaveText('Added task "Renew passport", due 15 Jan 2030, high priority.');
  const list = await runAndWait(page, '/tasks');
  await expect(list.locator('.card-output')).toHaveText('1 task:\nRenew passport, due 15 Jan 2030, high priority');
  const notes = await runAndWait(page, '/notes');
  await expect(notes.locator('.card-output')).toHaveText('No notes yet.');
});

test('a command typed during a run is never lost: it runs alongside, and the composer says so', async ({ page }) => {
  const errors = await openApp(page);
  await runCommand(page, '/run_javascript {"code":"while(true){}","timeout_ms":4000}');
  const status = page.getByTestId('composer-status');
  await expect(status).toHaveText('Running /run_javascript {"code":"while(true){}"…');
  await runCommand(page, '/calc 6*7');
  // The calculator answers while the loop still runs.
  await expect(page.locator('.result-card[data-skill="calculator"] .card-output')).toHaveText('42');
  await expect(page.locator('.result-card[data-skill="run_javascript"]')).toHaveCount(0);
  await expect(composer(page)).toHaveValue('');
  // Text typed but not sent survives the end of the run.
  await composer(page).fill('/calc 1+1');
  await expect(page.locator('.result-card[data-skill="run_javascript"]')).toHaveCount(1, { timeout: 20_000 });
  await expect(composer(page)).toHaveValue('/calc 1+1');
  await expect(status).toHaveCount(0);
  expect(errors).toEqual([]);
});

test('a message sent while the assistant replies is queued, says so, and goes when the reply ends', async ({ page }) => {
  const model = await startFakeModel('slow.json');
  try {
    await openApp(page);
    await useProvider(page, model.base);
    await say(page, 'Tell me a story');
    await expect(page.locator('.message.assistant').last()).toContainText('Once upon');
    await say(page, 'And another');
    await expect(page.getByTestId('composer-status')).toHaveText('Queued: your message goes when the reply under way ends.');
    await expect(composer(page)).toHaveValue('');
    await expect(page.locator('.message.user')).toHaveCount(1);
    // When the first reply ends, the queued message is sent.
    await expect(page.locator('.message.user')).toHaveCount(2, { timeout: 30_000 });
    await expect(page.locator('.message.user').last()).toContainText('And another');
    await expect(page.getByTestId('composer-status')).toHaveCount(0);
  } finally {
    await model.stop();
  }
});

test('keyboard: focus starts in the composer, / focuses it from anywhere, a skip link leads to it', async ({ page }) => {
  await openApp(page);
  await expect(composer(page)).toBeFocused();

  // From another panel, / brings the composer back.
  await page.getByRole('link', { name: 'Notes' }).click();
  await page.locator('body').press('/');
  await expect(composer(page)).toBeFocused();
  await expect(composer(page)).toHaveValue('');

  // On a fresh page, the first Tab stop is the skip link.
  await page.goto('/#/tasks');
  await page.waitForSelector('body[data-ready]');
  await page.keyboard.press('Tab');
  const skip = page.getByRole('link', { name: 'Skip to the composer' });
  await expect(skip).toBeFocused();
  await saveScreenshot(page, 'skip-link');
  await page.keyboard.press('Enter');
  await expect(composer(page)).toBeFocused();
});

test('"Attach a resource" is shown only when a connected server offers resources', async ({ page }) => {
  await openApp(page);
  await expect(page.getByRole('button', { name: 'Attach a resource' })).toHaveCount(0);
});

const PANELS = ['chat', 'notes', 'tasks', 'memory', 'skills', 'servers', 'activity', 'settings'];

for (const width of [390, 360]) {
  test(`every panel fits a ${width} px window: nothing overflows sideways, titles are whole, controls do not overlap`, async ({ page }) => {
    await page.setViewportSize({ width, height: 780 });
    await openApp(page);
    await runCommand(page, '/calc 1+1');
    await expect(lastCard(page)).toHaveAttribute('data-status', 'completed');
    for (const place of PANELS) {
      await page.goto(`/#/${place}`);
      await page.waitForSelector('body[data-ready]');
      await page.waitForTimeout(150);
      if (width === 390) await saveScreenshot(page, `narrow-${place}`);
      const problems = await page.evaluate(() => {
        const out = [];
        const root = document.scrollingElement;
        if (root.scrollWidth > window.innerWidth + 1) out.push(`page is ${root.scrollWidth}px wide`);
        for (const el of document.querySelectorAll('main *')) {
          const r = el.getBoundingClientRect();
          if (r.width === 0 || r.height === 0) continue;
          const s = getComputedStyle(el);
          if (s.visibility === 'hidden' || el.closest('.visually-hidden,[hidden]')) continue;
          if (r.right > window.innerWidth + 1 && s.position !== 'fixed' && !el.closest('pre,.log-wrap,table,.timeline pre')) {
            out.push(`${el.tagName.toLowerCase()}.${el.className} ends at ${Math.round(r.right)}`);
          }
        }
        for (const h of document.querySelectorAll('main h1')) {
          if (h.scrollWidth > h.clientWidth + 1) out.push(`title "${h.textContent}" is cut`);
          const hr = h.getBoundingClientRect();
          for (const b of document.querySelectorAll('main .page-head button, main .page-head select')) {
            const br = b.getBoundingClientRect();
            const overlap = !(br.right <= hr.left || br.left >= hr.right || br.bottom <= hr.top || br.top >= hr.bottom);
            if (overlap) out.push(`"${b.textContent.trim()}" covers the title`);
          }
        }
        for (const skill of document.querySelectorAll('.skill')) {
          const main = skill.querySelector('.skill-main')?.getBoundingClientRect();
          const controls = skill.querySelector('.skill-controls')?.getBoundingClientRect();
          if (main && controls) {
            const overlap = !(controls.right <= main.left || controls.left >= main.right || controls.bottom <= main.top || controls.top >= main.bottom);
            if (overlap) out.push(`skill ${skill.dataset.skill}: controls overlap the text`);
          }
        }
        return [...new Set(out)].slice(0, 12);
      });
      expect(problems, `${place} at ${width}px`).toEqual([]);
    }
  });
}
