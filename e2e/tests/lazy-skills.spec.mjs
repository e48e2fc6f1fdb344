// The skills' code arrives with the first call of its kind (a wasm chunk
// per kind, see ARCHITECTURE.md). When that chunk cannot be fetched, the
// call ends as a card that says so, the rest of the app keeps working, and
// the same call succeeds once the chunk can be fetched again.
import { test, expect } from '@playwright/test';
import { openApp, runCommand } from '../support/app.mjs';

// With the service worker serving the chunks from its cache, blocking the
// network would block nothing: this journey is about the network's part.
test.use({ serviceWorkers: 'block' });

/// Whether `url` is a wasm chunk: any wasm but the main module the first
/// load already fetched.
const isChunk = (url) => url.pathname.endsWith('.wasm') && !/\/hearth-app-[^/]*_bg\.wasm$/.test(url.pathname);

test('a skill whose code cannot be fetched fails with a clear card, and runs once it can', async ({ page }) => {
  const errors = await openApp(page);
  const blocked = [];
  const block = async (route) => {
    blocked.push(new URL(route.request().url()).pathname);
    await route.abort('internetdisconnected');
  };
  await page.route((url) => isChunk(url), block);

  await runCommand(page, '/notes {"action":"create","title":"Lazy","body":"loaded later"}');
  const first = page.locator('.result-card').first();
  await expect(first).toHaveAttribute('data-status', 'failed');
  await expect(first.locator('.card-output')).toContainText('could not load its code for notes, tasks and memory');
  await expect(first.locator('.card-output')).toContainText('Check the connection');
  expect(blocked.length).toBeGreaterThan(0);

  // The first screen's own skills do not wait for any chunk.
  await runCommand(page, '/calc 6*7');
  await expect(page.locator('.result-card').nth(1).locator('.card-output')).toContainText('42');

  await page.unroute((url) => isChunk(url), block);
  await runCommand(page, '/notes {"action":"create","title":"Lazy","body":"loaded later"}');
  await expect(page.locator('.result-card').nth(2).locator('.card-output')).toHaveText('Created note "Lazy".');
  await page.getByRole('link', { name: 'Notes' }).click();
  await expect(page.getByRole('option', { name: /Lazy/ })).toHaveCount(1);
  expect(errors).toEqual([]);
});
