// Helpers for driving the app the way a person does.
import { expect } from '@playwright/test';
import fs from 'node:fs';
import path from 'node:path';
import { e2eKey, repoRoot } from './env.mjs';

/// Opens the app the way a person does, from `hearth serve`'s launch link
/// (which carries the key to its API), then goes to `place` and waits
/// until the app has mounted. `base` and `key` default to the server
/// Playwright started.
export async function openApp(page, place = 'chat', { base = '', key = e2eKey() } = {}) {
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${base}/#token=${key}`);
  await page.waitForSelector('body[data-ready]');
  if (place !== 'chat') await page.goto(`${base}/#/${place}`);
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
