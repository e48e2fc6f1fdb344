// The skills' code arrives with the first call of its kind (a wasm chunk
// per kind, see ARCHITECTURE.md). When that chunk cannot be fetched, the
// call ends as a card that says so, the rest of the app keeps working, and
// the same call succeeds once the chunk can be fetched again.
import { test, expect } from '@playwright/test';
import { openApp, runCommand, saveScreenshot } from '../support/app.mjs';
import { flushStorage, say, startFakeModel, useProvider } from '../support/model.mjs';

// With the service worker serving the chunks from its cache, blocking the
// network would block nothing: this journey is about the network's part.
test.use({ serviceWorkers: 'block' });

/// Whether `url` is a wasm chunk: any wasm but the main module the first
/// load already fetched.
const isChunk = (url) => url.pathname.endsWith('.wasm') && !/\/hearth-app-[^/]*_bg\.wasm$/.test(url.pathname);

test('a skill whose code cannot be fetched fails with a clear card, and runs once it can', async ({ page }) => {
  const blocked = [];
  const block = async (route) => {
    blocked.push(new URL(route.request().url()).pathname);
    await route.abort('internetdisconnected');
  };
  // Blocked from the start, so the first visit's warming cannot fetch
  // them either (it gives up quietly; the call says what happened).
  await page.route(isChunk, block);
  const errors = await openApp(page);
  await page.waitForSelector('body[data-chunks-warm]');

  await runCommand(page, '/notes {"action":"create","title":"Lazy","body":"loaded later"}');
  const first = page.locator('.result-card').first();
  await expect(first).toHaveAttribute('data-status', 'failed');
  await expect(first.locator('.card-output')).toContainText('could not load its code for notes, tasks and memory');
  await expect(first.locator('.card-output')).toContainText('Check the connection');
  expect(blocked.length).toBeGreaterThan(0);
  await saveScreenshot(page, 'skill-chunk-missing');

  // The calculator is a chunk of its own too, and says so the same way.
  await runCommand(page, '/calc 6*7');
  const calc = page.locator('.result-card').nth(1);
  await expect(calc).toHaveAttribute('data-status', 'failed');
  await expect(calc.locator('.card-output')).toContainText('could not load its code for the calculator');

  await page.unroute(isChunk, block);
  await runCommand(page, '/notes {"action":"create","title":"Lazy","body":"loaded later"}');
  await expect(page.locator('.result-card').nth(2).locator('.card-output')).toHaveText('Created note "Lazy".');
  await runCommand(page, '/calc 6*7');
  await expect(page.locator('.result-card').nth(3).locator('.card-answer')).toContainText('42');
  await page.getByRole('link', { name: 'Notes' }).click();
  await expect(page.getByRole('option', { name: /Lazy/ })).toHaveCount(1);
  expect(errors).toEqual([]);
});

test('a first visit keeps every chunk in memory, so places and skills work when the network goes before the service worker has', async ({ page }) => {
  const errors = await openApp(page);
  await page.waitForSelector('body[data-chunks-warm]', { timeout: 60_000 });
  // From here on, no chunk can be fetched: as if the network went away
  // before any service worker kept a copy (none can here).
  const refused = [];
  await page.route(isChunk, async (route) => {
    refused.push(new URL(route.request().url()).pathname);
    await route.abort('internetdisconnected');
  });

  await runCommand(page, '/notes {"action":"create","title":"Warm","body":"kept in memory"}');
  await expect(page.locator('.result-card').first().locator('.card-output')).toHaveText('Created note "Warm".');
  await runCommand(page, '/run_javascript {"code":"6*7"}');
  await expect(page.locator('.result-card').nth(1)).toHaveAttribute('data-status', 'completed');
  await expect(page.locator('.result-card').nth(1).locator('.card-answer')).toContainText('42');
  await runCommand(page, '/calc 15% of 847');
  await expect(page.locator('.result-card').nth(2).locator('.card-answer')).toContainText('127.05');
  for (const place of ['Notes', 'Tasks', 'Memory', 'Skills', 'Servers', 'Activity', 'Settings']) {
    await page.getByRole('link', { name: place }).click();
    await expect(page.getByRole('alert').filter({ hasText: 'could not be opened' })).toHaveCount(0);
    await expect(page.locator('.place-loading')).toHaveCount(0);
  }
  await page.getByRole('link', { name: 'Notes' }).click();
  await expect(page.getByRole('option', { name: /Warm/ })).toHaveCount(1);
  expect(refused).toEqual([]);
  expect(errors).toEqual([]);
});

test('the assistant whose code cannot be fetched says so, keeps the message, and answers once it can', async ({ page }) => {
  const model = await startFakeModel('stream.json');
  try {
    const errors = await openApp(page);
    await useProvider(page, model.base);
    await flushStorage(page, 'settings');
    // A later visit whose chunks cannot arrive: the provider is stored,
    // but the assistant's engine is a chunk of its own.
    const blocked = [];
    const block = async (route) => {
      blocked.push(new URL(route.request().url()).pathname);
      await route.abort('internetdisconnected');
    };
    await page.route(isChunk, block);
    await page.reload();
    await page.waitForSelector('body[data-ready]');
    await say(page, 'Tell me something long');
    const composer = page.getByRole('textbox', { name: 'Message or command' });
    await expect(page.locator('.composer .inline-error')).toContainText('could not load its code for the assistant');
    await expect(composer).toHaveValue('Tell me something long');
    await expect(page.locator('.message.assistant')).toHaveCount(0);
    expect(blocked.length).toBeGreaterThan(0);
    await saveScreenshot(page, 'assistant-chunk-missing');

    await page.unroute(isChunk, block);
    await composer.press('Enter');
    await expect(page.locator('.message.assistant').last().locator('.message-text')).toContainText('The first paragraph settles');
    expect(errors).toEqual([]);
  } finally {
    await model.stop();
  }
});
