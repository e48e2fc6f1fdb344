// Plain words fill the form: without a model, a sentence picks a skill and
// its words fill the fields they name; the form shows only what the chosen
// action reads, Run has the focus, and Enter confirms. The card then reads
// like an answer, with the sentence as it was typed.
import { test, expect } from '@playwright/test';
import { expectScreen, openApp, runCommand } from '../support/app.mjs';

/// Types `line` (no slash), presses Enter, and returns the form it opens.
async function formFor(page, line, skill) {
  await runCommand(page, line);
  const form = page.getByRole('dialog', { name: skill });
  await expect(form).toBeVisible();
  return form;
}

test('a sentence fills the fields it names, and Enter runs it', async ({ page }) => {
  const errors = await openApp(page);
  const cards = page.locator('.result-card');

  // The calculation inside a question.
  let form = await formFor(page, 'what is 15% of 847', 'Calculator');
  await expect(form.getByLabel('Expression')).toHaveValue('15% of 847');
  await expect(form.getByRole('button', { name: 'Run' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(form).toBeHidden();
  await expect(cards.last().locator('.card-output')).toHaveText('127.05');
  await expect(cards.last().locator('.card-line')).toHaveText('what is 15% of 847');

  // A note's title and body; only the fields of creating a note.
  form = await formFor(page, 'make a note called Groceries with milk, eggs and bread', 'Notes');
  await expect(form.getByLabel('What to do')).toHaveValue('create');
  await expect(form.getByLabel('Title')).toHaveValue('Groceries');
  await expect(form.getByLabel('Body')).toHaveValue('milk, eggs and bread');
  await expect(form.locator('.form-field')).toHaveCount(4);
  await expect(form).not.toContainText('Notes to restore');
  await expect(form).not.toContainText('(undo)');
  await expect(form.getByLabel('Id')).toHaveCount(0);
  await page.keyboard.press('Enter');
  await expect(form).toBeHidden();
  const note = cards.last();
  await expect(note.locator('.card-output')).toContainText('Groceries');
  // What ran, read as the form named it: no JSON.
  await expect(note.locator('.card-fields')).toContainText('Create a note');
  await expect(note.locator('.card-fields dt', { hasText: 'Title' })).toBeVisible();
  await expect(note.locator('.card-fields dd').first()).toHaveText('Groceries');
  await expect(note).not.toContainText('{');

  // A task's due date and priority.
  form = await formFor(page, 'remind me to renew the passport tomorrow with high priority', 'Tasks');
  await expect(form.getByLabel('What to do')).toHaveValue('create');
  await expect(form.getByLabel('Title')).toHaveValue('renew the passport');
  await expect(form.getByLabel('Due')).toHaveValue('tomorrow');
  await expect(form.getByLabel('Priority').locator('option:checked')).toHaveText('high');
  await page.keyboard.press('Enter');
  await expect(cards.last()).toHaveAttribute('data-status', 'completed');
  await expect(cards.last().locator('.card-output')).toContainText('renew the passport');

  // A memory's text.
  form = await formFor(page, 'remember that I prefer metric units', 'Memory');
  await expect(form.getByLabel('Text')).toHaveValue('I prefer metric units');
  await page.keyboard.press('Enter');
  await expect(cards.last()).toHaveAttribute('data-status', 'completed');
  await expect(cards.last().locator('.card-output')).toContainText('I prefer metric units');

  // Another action shows its own fields; what was typed stays for it.
  form = await formFor(page, 'find my notes about groceries', 'Notes');
  await expect(form.getByLabel('What to do')).toHaveValue('search');
  await expect(form.getByLabel('Query')).toHaveValue('groceries');
  await form.getByLabel('What to do').selectOption('create');
  await expect(form.getByLabel('Query')).toHaveCount(0);
  await expect(form.getByLabel('Title')).toBeVisible();
  await form.getByLabel('What to do').selectOption('search');
  await expect(form.getByLabel('Query')).toHaveValue('groceries');
  await form.getByLabel('Query').press('Enter');
  await expect(cards.last().locator('.card-output')).toContainText('Groceries');

  // Words that do not say enough leave the field empty, and it has the
  // focus.
  form = await formFor(page, 'work out a percentage', 'Calculator');
  await expect(form.getByLabel('Expression')).toHaveValue('');
  await expect(form.getByLabel('Expression')).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(form).toBeHidden();
  expect(errors).toEqual([]);
});

for (const [width, height] of [[1280, 820], [360, 740]]) {
  test(`the chat with command cards, a form and the export menu at ${width} px`, { tag: '@baseline' }, async ({ page }) => {
    await page.setViewportSize({ width, height });
    await openApp(page);
    const hide = ['.card-meta', '.conversation-detail'];
    for (const line of ['/calc 15% of 847', '/calc days between 2026-01-01 and 2026-12-25', '/note Trip ideas #travel']) {
      const n = await page.locator('.result-card').count();
      await runCommand(page, line);
      await expect(page.locator('.result-card')).toHaveCount(n + 1);
    }
    const form = await formFor(page, 'make a note called Groceries with milk, eggs and bread', 'Notes');
    await expectScreen(page, `chat-form-${width}`, { hide });
    await page.keyboard.press('Enter');
    await expect(form).toBeHidden();
    await expect(page.locator('.result-card')).toHaveCount(4);
    await expectScreen(page, `chat-commands-${width}`, { hide });
    const row = page.locator('.conversation').first();
    await row.getByRole('button', { name: /^Export / }).click();
    await expect(row.getByRole('menu', { name: 'Export as' })).toBeVisible();
    await expectScreen(page, `chat-export-menu-${width}`, { hide });
  });
}
