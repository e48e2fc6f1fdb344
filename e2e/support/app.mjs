// Helpers for driving the app the way a person does.
import { expect } from '@playwright/test';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from './env.mjs';

/// Opens a place in the app and waits until it has mounted.
export async function openApp(page, place = 'chat') {
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`/#/${place}`);
  await page.waitForSelector('body[data-ready]');
  return errors;
}

/// Types a line into the composer and presses Enter.
export async function runCommand(page, line) {
  const composer = page.getByRole('textbox', { name: 'Message or command' });
  await composer.fill(line);
  await composer.press('Enter');
}

/// Saves a screenshot where CI keeps artifacts, and returns its path.
export async function saveScreenshot(page, name) {
  const dir = path.join(repoRoot, 'e2e', 'test-results', 'screens');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: false });
  expect(fs.statSync(file).size).toBeGreaterThan(1000);
  return file;
}

export { expectScreen } from './screens.mjs';
