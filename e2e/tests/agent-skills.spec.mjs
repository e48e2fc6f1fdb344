// Agent Skills: import real SKILL.md packages (a folder through the
// fallback input, a zip), see their warnings, activate one from the
// command bar, read its files, refuse escapes, remove with undo.
import { test, expect } from '@playwright/test';
import path from 'node:path';
import { openApp, runCommand, saveScreenshot } from '../support/app.mjs';
import { repoRoot } from '../support/env.mjs';

const fixtures = path.join(repoRoot, 'e2e', 'fixtures', 'agent-skills');

async function importFolder(page) {
  await page.getByLabel('Import a skill folder').setInputFiles(path.join(fixtures, 'team-skills'));
}

test('a folder import shows each package with its warnings and survives a reload', async ({ page }) => {
  const errors = await openApp(page, 'skills');
  await expect(page.getByText('No skill packages yet.', { exact: false })).toBeVisible();
  await importFolder(page);

  const result = page.getByRole('status', { name: 'Import result' });
  await expect(result).toContainText('Imported 2 skills; 1 problem blocked the rest.');
  await expect(result.locator('[data-package="pdf-tools"]')).toContainText('pdf-tools added');
  // Found inside a hidden folder; its name does not match the folder: a warning, still loaded.
  await expect(result.locator('[data-package="release-notes-writer"] .problem.warning')).toContainText(
    "'release-notes-writer' does not match the folder name 'release-notes'",
  );
  // No description: skipped with an error. node_modules is never looked at.
  await expect(result.locator('.import-rejected')).toContainText('team-skills/broken-skill/SKILL.md');
  await expect(page.locator('.package[data-package="left-out"]')).toHaveCount(0);

  const pdf = page.locator('.package[data-package="pdf-tools"]');
  await expect(pdf).toContainText('Extract text and tables from PDF files');
  await expect(pdf.locator('.tool-list')).toContainText(['word_count']);
  await expect(pdf.locator('.tool-list').nth(1)).toContainText('skill://pdf-tools/field-rules');
  await pdf.getByText('Files (6)').click();
  await expect(pdf.locator('.file-list')).toContainText('assets/logo.png');
  await expect(pdf.locator('.file-list')).toContainText('binary, never sent to a model');
  await expect(page.locator('.package[data-package="release-notes-writer"] .badge.warning')).toHaveText('1 warning');
  // The scoped tool sits in the registry at the enhanced tier.
  await expect(page.locator('.tier[data-tier="enhanced"] .skill[data-skill="word_count"]')).toBeVisible();
  await saveScreenshot(page, 'agent-skills-imported');

  await page.reload();
  await page.waitForSelector('body[data-ready]');
  await expect(page.locator('.package')).toHaveCount(2);
  await expect(page.locator('.package[data-package="pdf-tools"]')).toContainText('folder team-skills · 6 files');
  expect(errors).toEqual([]);
});

test('a zip imports; a zip-slip archive is refused and stores nothing', async ({ page }) => {
  await openApp(page, 'skills');
  await page.getByLabel('Import a skill archive').setInputFiles(path.join(fixtures, 'csv-helper.zip'));
  const result = page.getByRole('status', { name: 'Import result' });
  await expect(result).toContainText('Imported 1 skill.');
  await expect(page.locator('.package[data-package="csv-helper"]')).toContainText('archive csv-helper.zip · 2 files');

  await page.getByLabel('Import a skill archive').setInputFiles(path.join(fixtures, 'zip-slip.zip'));
  await expect(result).toContainText('Nothing was imported.');
  await expect(result.locator('.import-rejected')).toContainText("../escaped/SKILL.md: skipped: '..' is not allowed");
  await expect(result.locator('.import-rejected')).toContainText('../../etc/cron.d/evil: skipped');
  await expect(page.locator('.package')).toHaveCount(1);
  await saveScreenshot(page, 'agent-skills-zip-slip');
});

test('the command bar activates a skill, reads its reference file and refuses escapes', async ({ page }) => {
  await openApp(page, 'skills');
  await importFolder(page);
  await expect(page.locator('.package')).toHaveCount(2);
  await page.getByRole('link', { name: 'Chat' }).click();

  await runCommand(page, '/activate_skill pdf-tools');
  const cards = page.locator('.result-card');
  await expect(cards.nth(0)).toHaveAttribute('data-status', 'completed');
  await expect(cards.nth(0).locator('.card-output').last()).toContainText('<skill_content name="pdf-tools">');
  await expect(cards.nth(0).locator('.card-output').last()).toContainText('references/REFERENCE.md');

  await runCommand(page, '/read_skill_file {"skill":"pdf-tools","path":"references/REFERENCE.md"}');
  await expect(cards.nth(1).locator('.card-output').last()).toContainText('Checkbox fields take `/Yes` or `/Off`');

  await runCommand(page, '/read_skill_file {"skill":"pdf-tools","path":"../release-notes/SKILL.md"}');
  await expect(cards.nth(2)).toHaveAttribute('data-status', 'failed');
  await expect(cards.nth(2)).toContainText("'..' is not allowed: paths must stay inside the skill's folder");

  await runCommand(page, '/read_skill_file {"skill":"pdf-tools","path":"assets/logo.png"}');
  await expect(cards.nth(3)).toContainText('binary files are never sent to the model');
  await saveScreenshot(page, 'agent-skills-command-bar');

  // The calls are in the one activity log.
  await page.getByRole('link', { name: 'Activity' }).click();
  await expect(page.getByRole('cell', { name: 'Read skill file', exact: true })).toHaveCount(3);
  await expect(page.getByRole('cell', { name: 'Activate skill', exact: true })).toHaveCount(1);
});

test('a scoped tool runs its Python script in the sandbox, through the one call path', async ({ page }) => {
  test.setTimeout(180_000);
  await openApp(page, 'skills');
  await importFolder(page);
  await expect(page.locator('.package')).toHaveCount(2);
  await page.getByRole('link', { name: 'Chat' }).click();

  await runCommand(page, '/activate_skill pdf-tools');
  const cards = page.locator('.result-card');
  await expect(cards.nth(0)).toHaveAttribute('data-status', 'completed');

  // word_count is scripts/word_count.py: JSON on stdin, JSON on stdout.
  await runCommand(page, '/call_skill_tool {"skill":"pdf-tools","tool":"word_count","input":{"text":"one two  three four"}}');
  await expect(cards.nth(1)).toHaveAttribute('data-status', 'completed', { timeout: 150_000 });
  await expect(cards.nth(1).locator('.card-output').last()).toContainText('{"words":4}');

  // Input that breaks the tool's schema never reaches the script.
  await runCommand(page, '/call_skill_tool {"skill":"pdf-tools","tool":"word_count","input":{"text":7}}');
  await expect(cards.nth(2)).toHaveAttribute('data-status', 'failed');
  await saveScreenshot(page, 'agent-skills-script');
});

test('remove with undo, and a skill written in the editor', async ({ page }) => {
  await openApp(page, 'skills');
  await page.getByLabel('Import a skill archive').setInputFiles(path.join(fixtures, 'csv-helper.zip'));
  await expect(page.locator('.package')).toHaveCount(1);
  await page.getByRole('button', { name: 'Remove csv-helper' }).click();
  await expect(page.locator('.package')).toHaveCount(0);
  await page.getByRole('button', { name: 'Undo' }).click();
  await expect(page.locator('.package[data-package="csv-helper"]')).toBeVisible();
  await page.reload();
  await page.waitForSelector('body[data-ready]');
  await expect(page.locator('.package[data-package="csv-helper"]')).toBeVisible();

  await page.getByRole('button', { name: 'New skill' }).click();
  const dialog = page.getByRole('dialog', { name: 'New skill' });
  await dialog.getByLabel('Skill name').fill('Meeting-Notes');
  await expect(dialog.locator('.field-problems').first()).toContainText('lowercase');
  await expect(dialog.getByRole('button', { name: 'Save skill' })).toBeDisabled();
  await dialog.getByLabel('Skill name').fill('meeting-notes');
  await dialog.getByLabel('Skill description').fill('Turn a meeting transcript into decisions and action items.');
  await dialog.getByLabel('Skill instructions').fill('List decisions first, then action items with owners.');
  await expect(dialog.getByText('Valid skill')).toBeVisible();
  await saveScreenshot(page, 'agent-skills-editor');
  await dialog.getByRole('button', { name: 'Save skill' }).click();
  await expect(page.locator('.package[data-package="meeting-notes"]')).toContainText('written in Hearth');

  await page.getByRole('link', { name: 'Chat' }).click();
  // A package's own name works as a command too.
  await runCommand(page, '/meeting-notes');
  await expect(page.locator('.result-card').first().locator('.card-output')).toContainText('List decisions first');
});
