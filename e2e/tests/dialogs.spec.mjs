// Dialogs and figures a newcomer meets in the first hour: Activity's
// detail reads as the output first, a duration is the run alone with the
// approval wait shown apart, Esc at an approval does what its hint says,
// focus comes back where it was after every dialog, and the skill form
// reads like a form. Each test stands for one wall.
import { test, expect } from '@playwright/test';
import { openApp, runCommand, saveScreenshot } from '../support/app.mjs';
import { startFakeModel, useProvider, say } from '../support/model.mjs';

const composer = (page) => page.getByRole('textbox', { name: 'Message or command' });

/// "0.20 ms", "12 ms", "1.9 s" → milliseconds.
function ms(text) {
  const m = text.match(/([\d.]+)\s*(ms|s)\b/);
  expect(m, `a duration in "${text}"`).not.toBeNull();
  return Number(m[1]) * (m[2] === 's' ? 1000 : 1);
}

async function setApproval(page, skillName, value) {
  await page.getByRole('link', { name: 'Skills' }).click();
  await page.getByRole('combobox', { name: `Approval for ${skillName}` }).selectOption(value);
}

test("Activity's detail shows the output in words first, and the log record only on request", async ({ page }) => {
  const errors = await openApp(page);
  await runCommand(page, '/task Renew passport !high');
  await expect(page.locator('.result-card')).toHaveCount(1);

  await page.getByRole('link', { name: 'Activity' }).click();
  const row = page.locator('tr.log-row');
  await expect(row).toHaveCount(1);
  await row.click();
  const detail = page.getByRole('dialog', { name: 'Tasks' });
  await expect(detail).toBeVisible();
  // The first thing under the title is what came out, as words.
  await expect(detail.locator('h3').first()).toHaveText('Output');
  await expect(detail.locator('.detail-output .card-output')).toHaveText('Added task "Renew passport", high priority.');
  // The stored record, with its ids, waits behind a disclosure.
  const raw = detail.getByLabel('The log record as stored');
  await expect(raw).toBeHidden();
  await expect(detail).not.toContainText(/"conversation_id"|"skill_id"/, { useInnerText: true });
  await saveScreenshot(page, 'activity-detail');
  await detail.getByText('Show the log record').click();
  await expect(raw).toBeVisible();
  await expect(raw).toContainText('"skill_id": "tasks"');
  await saveScreenshot(page, 'activity-detail-record');
  expect(errors).toEqual([]);
});

test('a duration counts the run alone, and the approval wait is shown apart', async ({ page }) => {
  const errors = await openApp(page);
  await setApproval(page, 'Calculator', 'ask');
  await page.getByRole('link', { name: 'Chat' }).click();
  await runCommand(page, '/calc 6*7');
  const dialog = page.getByRole('dialog', { name: 'Calculator' });
  await expect(dialog.getByRole('button', { name: 'Allow once' })).toBeEnabled();
  // The person takes their time to decide.
  await page.waitForTimeout(1500);
  await dialog.getByRole('button', { name: 'Allow once' }).click();

  const card = page.locator('.result-card[data-status="completed"]');
  await expect(card.locator('.card-output')).toHaveText('42');
  const wait = await card.locator('.card-wait').textContent();
  expect(wait).toMatch(/^waited [\d.]+ s for approval$/);
  const waited = ms(wait);
  expect(waited).toBeGreaterThanOrEqual(1500);
  // The calculator's own time is a small part of what the person waited.
  const ran = ms(await card.locator('.card-duration').textContent());
  expect(ran).toBeLessThan(waited / 2);

  // Activity keeps both, apart, in the list and in the detail.
  await page.getByRole('link', { name: 'Activity' }).click();
  const row = page.locator('tr.log-row');
  await expect(row.locator('.log-wait')).toHaveText(wait);
  await row.click();
  const detail = page.getByRole('dialog', { name: 'Calculator' });
  await expect(detail.getByTestId('activity-wait')).toHaveText(wait);
  expect(ms(await detail.getByTestId('activity-duration').textContent())).toBeLessThan(waited / 2);
  await saveScreenshot(page, 'activity-detail-wait');
  expect(errors).toEqual([]);
});

test('Esc at an approval denies that call, as its hint says, and the reply goes on', async ({ page }) => {
  const model = await startFakeModel('approval.json');
  try {
    const errors = await openApp(page, 'skills');
    await page.getByRole('switch', { name: 'Enable Web fetch' }).check();
    await useProvider(page, model.base);

    await say(page, 'Please fetch https://example.com/ for me');
    const dialog = page.locator('.timeline').getByRole('dialog', { name: 'Web fetch' });
    await expect(dialog).toBeVisible();
    await expect(dialog.getByTestId('approval-hint')).toHaveText(
      'Esc denies this call, like Deny; the assistant is told and its reply goes on. Stop ends the reply.',
    );
    await expect(dialog.getByRole('button', { name: 'Deny' })).toBeFocused();
    await saveScreenshot(page, 'approval-esc-hint');
    await page.keyboard.press('Escape');

    // Denied, and the turn went on: the model heard the answer and replied.
    await expect(dialog).toBeHidden();
    await expect(page.locator('.tool-card[data-skill="web_fetch"]')).toHaveAttribute('data-state', 'denied');
    await expect(page.locator('.message-text').last()).toContainText('The fetch came back with:');
    // Focus is back in the composer, not on the page.
    await expect(composer(page)).toBeFocused();
    expect(errors).toEqual([]);
  } finally {
    await model.stop();
  }
});

test('a command that asks: Esc denies it as the hint says, and focus returns to the composer', async ({ page }) => {
  const errors = await openApp(page);
  await setApproval(page, 'Notes', 'ask');
  await page.getByRole('link', { name: 'Chat' }).click();
  await runCommand(page, '/notes');
  const dialog = page.getByRole('dialog', { name: 'Notes' });
  await expect(dialog.getByTestId('approval-hint')).toHaveText('Esc denies this call, like Deny; nothing runs.');
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await expect(page.locator('.result-card[data-status="denied"]')).toHaveCount(1);
  await expect(composer(page)).toBeFocused();
  expect(errors).toEqual([]);
});

test('focus returns to where it was after every dialog', async ({ page }) => {
  const errors = await openApp(page);
  const focusedTag = () => page.evaluate(() => document.activeElement?.tagName);

  // The skill form, left with Esc and with Cancel: back to the composer.
  await composer(page).fill('/note');
  await composer(page).press('Enter');
  let form = page.getByRole('dialog', { name: 'Notes' });
  await expect(form).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(form).toBeHidden();
  await expect(composer(page)).toBeFocused();
  await composer(page).fill('/note');
  await composer(page).press('Enter');
  await form.getByRole('button', { name: 'Cancel' }).click();
  await expect(form).toBeHidden();
  await expect(composer(page)).toBeFocused();

  // The help panel, closed with its button and with Esc.
  await runCommand(page, '/help');
  const help = page.getByRole('region', { name: 'Commands' });
  await expect(help).toBeVisible();
  await help.getByRole('button', { name: 'Close help' }).click();
  await expect(help).toBeHidden();
  await expect(composer(page)).toBeFocused();
  await runCommand(page, '/help');
  await help.getByRole('button', { name: 'Close help' }).focus();
  await page.keyboard.press('Escape');
  await expect(help).toBeHidden();
  await expect(composer(page)).toBeFocused();

  // Activity: the detail goes back to its row, the confirmation to the
  // button that opened it.
  await runCommand(page, '/calc 1+1');
  await expect(page.locator('.result-card')).toHaveCount(1);
  await page.getByRole('link', { name: 'Activity' }).click();
  const row = page.locator('tr.log-row');
  await row.click();
  const detail = page.getByRole('dialog', { name: 'Calculator' });
  await expect(detail).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(detail).toBeHidden();
  await expect(row).toBeFocused();
  const clear = page.getByRole('button', { name: 'Clear…' });
  await clear.click();
  const confirm = page.getByRole('alertdialog', { name: 'Clear the activity log?' });
  await expect(confirm.getByRole('button', { name: 'Cancel' })).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(confirm).toBeHidden();
  await expect(clear).toBeFocused();
  // Confirmed: the opener stays, so focus does too; never the body.
  await clear.click();
  await confirm.getByRole('button', { name: 'Clear the log' }).click();
  await expect(page.getByText('Nothing has run yet.', { exact: false })).toBeVisible();
  await expect.poll(focusedTag).not.toBe('BODY');
  expect(errors).toEqual([]);
});

test('the skill form reads like a form: required first, then the schema order, checked as it is typed', async ({ page }) => {
  const errors = await openApp(page);
  // What was typed is carried in.
  await composer(page).fill('jot down an idea for the garden');
  await expect(page.getByRole('listbox', { name: 'Matching skills' })).toBeVisible();
  await composer(page).press('Enter');
  const form = page.getByRole('dialog', { name: 'Notes' });
  await expect(form.getByLabel('Title')).toHaveValue('an idea for the garden');

  // Only the fields of the chosen action, in the order a note is written:
  // Title, Body, Tags; nothing of the other actions (an id, the undo's
  // notes as JSON).
  const labels = async () => (await form.locator('.form-field label').allTextContents()).map((l) => l.replace(/\s*\*$/, '').trim());
  expect(await labels()).toEqual(['What to do', 'Title', 'Body', 'Tags']);
  await form.getByLabel('What to do').selectOption('list');
  expect(await labels()).toEqual(['What to do', 'Tag', 'Limit']);

  // A number field is labelled and styled like the text fields.
  const limit = form.getByLabel('Limit');
  await expect(limit).toHaveAttribute('type', 'number');
  const look = (loc) => loc.evaluate((el) => {
    const s = getComputedStyle(el);
    return [s.borderTopWidth, s.borderTopStyle, s.borderRadius, s.paddingLeft, s.fontSize].join(' ');
  });
  expect(await look(limit)).toBe(await look(form.getByLabel('Tag')));

  // Checked as it is typed, before Run.
  await limit.fill('500');
  const field = form.locator('.form-field[data-field="limit"]');
  await expect(field.locator('.field-error')).toHaveText('Limit must be at most 100');
  await expect(limit).toHaveAttribute('aria-invalid', 'true');
  await saveScreenshot(page, 'skill-form-checked');
  await limit.fill('20');
  await expect(field.locator('.field-error')).toHaveCount(0);
  await expect(limit).not.toHaveAttribute('aria-invalid', 'true');
  // Back to creating a note: what was typed is still there, and emptying
  // a field the action needs says so at once.
  await form.getByLabel('What to do').selectOption('create');
  await expect(form.getByLabel('Title')).toHaveValue('an idea for the garden');
  await form.getByLabel('Title').fill('');
  await expect(form.locator('.form-field[data-field="title"] .field-error')).toHaveText('Title is required');
  await form.getByLabel('Title').fill('Plant garlic');
  await form.getByRole('button', { name: 'Run' }).click();
  await expect(page.locator('.result-card').last().locator('.card-output')).toHaveText('Created note "Plant garlic".');
  expect(errors).toEqual([]);
});
