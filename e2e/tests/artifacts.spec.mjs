// Artifacts, as a person meets them: the model (the scripted fake model)
// makes an HTML page and then a second version of it; the tool card opens
// the panel beside the chat, whose preview runs the page in its sandbox;
// the versions step back and forth by mouse and keyboard; Changes shows
// the lines each version added and removed; Download saves the source
// under the title with the kind's extension; Escape closes the panel.
// The artifact survives a reload, and with the network off and the server
// stopped the page and a chart (drawn by Chart.js from the build) still
// render. Pinned into a note, a version outlives its conversation, opens
// from the note, and unpins with Undo.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import { expectScreen, saveScreenshot } from '../support/app.mjs';
import { say, startFakeModel, useProvider } from '../support/model.mjs';
import { startServe } from '../support/serve.mjs';

/// Opens a `hearth serve` of its own through its launch link, and waits
/// until the service worker controls the page and has cached the shell.
async function openControlled(page, server) {
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(server.launch);
  await page.waitForSelector('body[data-ready]');
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 30_000 });
  await page.waitForFunction(
    async () => {
      const keys = await caches.keys();
      const shell = keys.find((k) => k.startsWith('hearth-shell-'));
      if (!shell) return false;
      const cached = (await (await caches.open(shell)).keys()).map((r) => new URL(r.url).pathname);
      return cached.includes('/sandbox/artifact.html') && cached.includes('/vendor/chart.umd.min.js');
    },
    null,
    { timeout: 60_000 },
  );
  return errors;
}

const panel = (page) => page.getByRole('complementary', { name: /Sales/ });
/// The preview's document, inside the sandbox page.
const preview = (page) => page.frameLocator('.artifact-frame').frameLocator('iframe');

test('the model makes a page and a new version of it; the panel previews, steps, diffs, downloads, and keeps it offline', { tag: '@baseline' }, async ({ page, context }) => {
  test.setTimeout(180_000);
  const server = await startServe();
  const model = await startFakeModel('artifacts.json');
  let stopped = false;
  try {
    const errors = await openControlled(page, server);
    await useProvider(page, model.base);

    await say(page, 'Please make a sales page');
    const created = page.locator('.tool-card[data-skill="create_artifact"]');
    await expect(created).toHaveAttribute('data-state', 'completed');
    await say(page, 'Now add the second quarter');
    const updated = page.locator('.tool-card[data-skill="update_artifact"]');
    await expect(updated).toHaveAttribute('data-state', 'completed');
    await expect(page.locator('.message.assistant').last()).toContainText('Done: Updated "Sales" to version 2.');

    // The card opens the panel, at the newest version, with its preview
    // running the page's own script in the sandbox.
    await page.getByRole('button', { name: 'Open artifact' }).first().click();
    const p = panel(page);
    await expect(p.getByRole('heading', { name: 'Sales' })).toBeFocused();
    await expect(p.locator('.artifact-version')).toHaveText('v2 of 2');
    await expect(preview(page).locator('h1')).toHaveText('Sales v2');
    await expect(preview(page).locator('h1')).toHaveAttribute('data-ran', 'yes');
    // Opening the panel narrows the chat, whose text then reflows to a
    // height that depends on when it was measured: the picture is taken
    // with the chat at its end.
    await page.locator('.timeline').evaluate((el) => { el.scrollTop = el.scrollHeight; });
    // The artifact's id, in the cards' input and output, differs on every
    // run, and with it the token counts the fake model reports.
    await expectScreen(page, 'artifact-panel', { hide: ['.card-duration', '.conversation-detail', '.card-output', '.card-input', '.usage-line'] });

    // Back and forth, by mouse and by keyboard.
    await p.getByRole('button', { name: 'Previous version' }).click();
    await expect(p.locator('.artifact-version')).toHaveText('v1 of 2');
    await expect(p.getByRole('button', { name: 'Previous version' })).toBeDisabled();
    await expect(preview(page).locator('h1')).toHaveText('Sales v1');
    await p.getByRole('button', { name: 'Next version' }).focus();
    await page.keyboard.press('Enter');
    await expect(p.locator('.artifact-version')).toHaveText('v2 of 2');
    await expect(p.getByRole('button', { name: 'Next version' })).toBeDisabled();
    await expect(preview(page).locator('h1')).toHaveText('Sales v2');

    // The source, and the changes against the version before.
    await p.getByRole('tab', { name: 'Source' }).click();
    await expect(p.locator('.artifact-source')).toContainText('<h1 id="head">Sales v2</h1>');
    await p.getByRole('tab', { name: 'Changes' }).click();
    await expect(p.locator('.artifact-diff-summary')).toHaveText('Against v1: 2 line(s) added, 1 removed.');
    await expect(p.locator('.diff-line.removed')).toHaveText(['−<h1 id="head">Sales v1</h1>']);
    await expect(p.locator('.diff-line.added')).toHaveText(['+<h1 id="head">Sales v2</h1>', '+<p>Quarter two</p>']);
    await p.getByRole('button', { name: 'Previous version' }).click();
    await expect(p.locator('.artifact-diff-none')).toHaveText('The first version: nothing to compare with.');
    await p.getByRole('button', { name: 'Next version' }).click();

    // Download: the title with the kind's extension, and the source.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      p.getByRole('button', { name: 'Download the source' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('sales.html');
    const saved = fs.readFileSync(await download.path(), 'utf8');
    expect(saved).toContain('<h1 id="head">Sales v2</h1>');
    expect(saved).toContain('<p>Quarter two</p>');

    // Escape closes it, and focus goes back to where it was.
    await p.getByRole('tab', { name: 'Preview' }).click();
    await page.keyboard.press('Escape');
    await expect(page.locator('.artifact-panel')).toHaveCount(0);

    // A chart, drawn by Chart.js inside the sandbox.
    const openers = page.getByRole('button', { name: 'Open artifact' });
    const before = await openers.count();
    await say(page, 'Now a chart of it');
    await expect(page.locator('.tool-card[data-skill="create_artifact"]')).toHaveCount(2);
    await expect(page.locator('.tool-card[data-skill="create_artifact"]').last()).toHaveAttribute('data-state', 'completed');
    // The chart's card has its own opener once its result is in.
    await expect(openers).toHaveCount(before + 1);
    await openers.last().click();
    const chart = page.getByRole('complementary', { name: 'Sales chart' });
    await expect(chart.locator('.artifact-kind')).toHaveText('Chart');
    const drawn = async () => {
      const frame = page.frames().find((f) => f.url() === 'about:srcdoc' && f.parentFrame()?.url().endsWith('/sandbox/artifact.html'));
      return frame ? frame.evaluate(() => !!(window.Chart && window.Chart.getChart(document.getElementById('chart')))) : false;
    };
    await expect.poll(drawn).toBe(true);
    await page.keyboard.press('Escape');

    // After a reload it is still there.
    await page.reload();
    await page.waitForSelector('body[data-ready]');
    await page.getByRole('button', { name: 'Open artifact' }).first().click();
    await expect(panel(page).locator('.artifact-version')).toHaveText('v2 of 2');
    await expect(preview(page).locator('h1')).toHaveText('Sales v2');

    // With the network off and the server stopped, the page and the chart
    // still render, from the service worker's copy.
    await context.setOffline(true);
    await server.stop();
    stopped = true;
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
    await page.reload();
    await page.waitForSelector('body[data-ready]');
    await page.getByRole('button', { name: 'Open artifact' }).first().click();
    await expect(preview(page).locator('h1')).toHaveText('Sales v2');
    await expect(preview(page).locator('h1')).toHaveAttribute('data-ran', 'yes');
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Open artifact' }).last().click();
    await expect.poll(drawn).toBe(true);

    // Pinning, still offline: the page's newest version into a new note,
    // then the chart into that same note.
    const toast = (where) => where.locator('.toast');
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Open artifact' }).first().click();
    await panel(page).getByRole('button', { name: 'Pin to note' }).click();
    const pinForm = panel(page).getByRole('form', { name: 'Pin to a note' });
    await expect(pinForm).toContainText('Pin v2 to');
    await expect(pinForm.getByLabel('Note', { exact: true })).toBeFocused();
    await pinForm.getByRole('button', { name: 'Pin' }).click();
    await expect(toast(panel(page))).toContainText('Pinned v2 of “Sales” to the note “Sales”.');
    await expect(pinForm).toHaveCount(0);
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Open artifact' }).last().click();
    const chartPanel = page.getByRole('complementary', { name: 'Sales chart' });
    await chartPanel.getByRole('button', { name: 'Pin to note' }).click();
    await chartPanel.getByLabel('Note', { exact: true }).selectOption({ label: 'Sales' });
    await chartPanel.getByRole('button', { name: 'Pin', exact: true }).click();
    await expect(toast(chartPanel)).toContainText('Pinned v1 of “Sales chart” to the note “Sales”.');
    await page.keyboard.press('Escape');

    // The conversation goes, and with it its artifacts; the pins stay.
    await page.getByRole('button', { name: 'Delete Please make a sales page' }).click();
    await expect(page.locator('.toast')).toContainText('Deleted');
    await page.getByRole('link', { name: 'Notes' }).click();
    const listed = page.getByRole('listbox', { name: 'Notes' }).getByRole('option', { name: /Sales/ });
    await expect(listed).toContainText('Pinned: Sales, Sales chart');
    await listed.click();
    const pins = page.getByRole('region', { name: 'Pinned artifacts' });
    await expect(pins.locator('.note-pin-title')).toHaveText(['Sales', 'Sales chart']);
    await saveScreenshot(page, 'note-pins');
    await pins.getByRole('button', { name: 'Open Sales', exact: true }).click();
    await expect(panel(page).locator('.artifact-pinned')).toHaveText('Pinned in a note');
    await expect(panel(page).getByRole('tab', { name: 'Changes' })).toHaveCount(0);
    await expect(panel(page).getByRole('button', { name: 'Pin to note' })).toHaveCount(0);
    await expect(preview(page).locator('h1')).toHaveText('Sales v2');
    await expect(preview(page).locator('h1')).toHaveAttribute('data-ran', 'yes');
    await saveScreenshot(page, 'note-pin-open');
    await page.keyboard.press('Escape');
    await expect(page.locator('.artifact-panel')).toHaveCount(0);
    await pins.getByRole('button', { name: 'Open Sales chart' }).click();
    await expect.poll(drawn).toBe(true);
    await page.keyboard.press('Escape');

    // Unpinning takes the block out of the note, and Undo puts it back.
    await pins.getByRole('button', { name: 'Unpin Sales chart' }).click();
    await expect(pins.locator('.note-pin-title')).toHaveText(['Sales']);
    await page.locator('.toast').getByRole('button', { name: 'Undo' }).click();
    await expect(pins.locator('.note-pin-title')).toHaveText(['Sales', 'Sales chart']);
    expect(errors).toEqual([]);
  } finally {
    await context.setOffline(false);
    if (!stopped) await server.stop();
    await model.stop();
  }
});
