// The enhanced tier under the one permission layer: the
// code and file skills are listed under Enhanced with their own switches,
// on by default without approval; switching one off makes a call answer
// "disabled" instead of running; "ask" brings the approval dialog with the
// full code; every outcome lands in Activity.
import { test, expect } from '@playwright/test';
import { openApp, runCommand, saveScreenshot } from '../support/app.mjs';
import { runSkill } from '../support/sandbox.mjs';

const ENHANCED = [
  ['run_javascript', 'Run JavaScript'],
  ['run_python', 'Run Python'],
  ['read_file', 'Read file'],
  ['list_files', 'List files'],
  ['search_files', 'Search files'],
];

test('enhanced skills: listed with switches, disabled answers clearly, ask brings the dialog', async ({ page }) => {
  const errors = await openApp(page);

  // Listed under Enhanced, each on by default and not asking first.
  await page.getByRole('link', { name: 'Skills' }).click();
  const tier = page.locator('section.tier[data-tier="enhanced"]');
  await expect(tier.locator('li.skill')).toHaveCount(ENHANCED.length);
  for (const [id, name] of ENHANCED) {
    const row = tier.locator(`li.skill[data-skill="${id}"]`);
    await expect(row.getByRole('switch', { name: `Enable ${name}` })).toBeChecked();
    await expect(row.getByRole('combobox', { name: `Approval for ${name}` })).toHaveValue('');
    await expect(row.getByRole('combobox', { name: `Approval for ${name}` }).locator('option').first()).toHaveText("Default (don't ask)");
  }
  await tier.locator('h2').evaluate((h) => h.scrollIntoView({ block: 'start' }));
  await saveScreenshot(page, 'skills-enhanced');

  // Off: the call is refused with a plain message and nothing runs.
  await tier.getByRole('switch', { name: 'Enable Run JavaScript' }).uncheck();
  await page.getByRole('link', { name: 'Chat' }).click();
  const off = await runSkill(page, 'run_javascript', { code: "'should not run'" });
  expect(off.status).toBe('denied');
  expect(off.output).toBe('Run JavaScript is disabled; enable it in the Skills panel');

  // Back on, set to ask: the dialog shows the full code before it runs.
  await page.getByRole('link', { name: 'Skills' }).click();
  await tier.getByRole('switch', { name: 'Enable Run JavaScript' }).check();
  await tier.getByRole('combobox', { name: 'Approval for Run JavaScript' }).selectOption('ask');
  await page.getByRole('link', { name: 'Chat' }).click();
  const args = { code: 'const xs = [1, 2, 3];\nxs.reduce((a, b) => a + b, 0)' };
  await runCommand(page, `/run_javascript ${JSON.stringify(args)}`);
  const dialog = page.getByRole('dialog', { name: 'Run JavaScript' });
  await expect(dialog).toBeVisible();
  expect(JSON.parse(await dialog.getByLabel('Full arguments').textContent())).toEqual(args);
  await saveScreenshot(page, 'code-approval-dialog');
  await dialog.getByRole('button', { name: 'Deny' }).click();
  await expect(page.locator('.result-card[data-status="denied"]')).toHaveCount(2);

  await runCommand(page, `/run_javascript ${JSON.stringify(args)}`);
  await expect(dialog).toBeVisible();
  await dialog.getByRole('button', { name: 'Allow once' }).click();
  const ran = page.locator('.result-card[data-status="completed"]');
  await expect(ran).toHaveCount(1);
  expect(await ran.locator('.card-answer').innerText()).toMatch(/^VALUE\n6$/);

  // All three calls are in the log, with who decided.
  await page.getByRole('link', { name: 'Activity' }).click();
  await page.getByLabel('Skill').selectOption('run_javascript');
  await expect(page.locator('tr.log-row')).toHaveCount(3);
  await page.getByLabel('Status').selectOption('denied');
  await expect(page.locator('tr.log-row')).toHaveCount(2);
  expect(errors).toEqual([]);
});
