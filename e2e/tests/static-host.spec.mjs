// Hearth from any static host: the build served by `python3 -m http.server`,
// which sends no CSP, no COOP/COEP and has no proxy. Everything but the web
// skills works: the calculator, notes, JavaScript, Python (on the first
// visit without cross-origin isolation, and after a reload under the
// service worker, which adds it), an Agent Skill's script, backup and
// restore, an MCP App, and an artifact's page and chart made by the
// (scripted fake) model; a web skill says the proxy is missing and how to
// get it.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCommand, saveScreenshot } from '../support/app.mjs';
import { repoRoot } from '../support/env.mjs';
import { requirePeers, startAppsServer } from '../support/mcp.mjs';
import { say, startFakeModel, useProvider } from '../support/model.mjs';
import { runSkill, startCanary } from '../support/sandbox.mjs';
import { startStatic } from '../support/static.mjs';

test.describe.configure({ mode: 'serial' });

let server;
test.beforeAll(async () => {
  server = await startStatic();
});
test.afterAll(async () => {
  await server?.stop();
});

/// Opens a place in the app on the static host in a fresh profile.
async function openStatic(browser, place = 'chat') {
  const context = await browser.newContext({ baseURL: server.url });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`/#/${place}`);
  await page.waitForSelector('body[data-ready]');
  return { context, page, errors };
}

/// Waits until the service worker controls the page, then reloads under it.
async function reloadUnderWorker(page) {
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 30_000 });
  await page.reload();
  await page.waitForSelector('body[data-ready]');
}

/// The two visits a person copying dist/ to a host meets: a first one with
/// no service worker (frames sandboxed by their attribute), and one the
/// worker serves. Yields each visit's name, whether the worker serves it,
/// and its page at `route` with the page errors it collects.
async function* visits(browser, route) {
  for (const visit of ['without the service worker', 'served by the service worker']) {
    const worker = visit === 'served by the service worker';
    const context = await browser.newContext({ baseURL: server.url, serviceWorkers: worker ? 'allow' : 'block' });
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(route);
    await page.waitForSelector('body[data-ready]');
    if (worker) await reloadUnderWorker(page);
    try {
      yield { visit, worker, page, errors };
    } finally {
      await context.close();
    }
  }
}

test('the host sends no special headers and has no proxy', async () => {
  const res = await fetch(`${server.url}/index.html`);
  expect(res.status).toBe(200);
  for (const name of ['content-security-policy', 'cross-origin-opener-policy', 'cross-origin-embedder-policy']) {
    expect(res.headers.get(name), name).toBeNull();
  }
  expect((await fetch(`${server.url}/api/session`)).status).toBe(404);
});

test('core skills, notes and JavaScript work, and a web skill says the proxy is missing', async ({ browser }) => {
  const { context, page, errors } = await openStatic(browser);
  await runCommand(page, '/calc 15% of 847');
  await expect(page.locator('.result-card .card-output').last()).toHaveText('127.05');
  await runCommand(page, '/notes {"action": "create", "title": "Kept on a static host", "body": "no server of its own"}');
  await expect(page.locator('.result-card').last()).toHaveAttribute('data-status', 'completed');
  await page.getByRole('link', { name: 'Notes' }).click();
  await expect(page.getByRole('option', { name: /Kept on a static host/ })).toBeVisible();
  await page.reload();
  await page.waitForSelector('body[data-ready]');
  await expect(page.getByRole('option', { name: /Kept on a static host/ })).toBeVisible();

  await page.getByRole('link', { name: 'Chat' }).click();
  const js = await runSkill(page, 'run_javascript', { code: 'const xs = [1, 2, 3]; xs.map((x) => x * 14).at(-1)' });
  expect(js.status, js.output).toBe('completed');
  expect(js.output).toContain('42');

  // The web skills need hearth serve's proxy, and say so.
  await page.getByRole('link', { name: 'Skills' }).click();
  const toggle = page.getByRole('switch', { name: 'Enable Web fetch' });
  await toggle.check();
  await expect(toggle).toBeChecked();
  await page.getByRole('link', { name: 'Chat' }).click();
  await runCommand(page, '/web_fetch https://example.com/');
  // A network skill always asks; its buttons wake a moment after it shows.
  await page.getByRole('dialog', { name: 'Web fetch' }).getByRole('button', { name: 'Allow once' }).click();
  const card = page.locator('.result-card[data-skill="web_fetch"]').last();
  await expect(card).toHaveAttribute('data-status', 'failed');
  await expect(card.locator('.card-output')).toContainText("web_fetch needs Hearth's local proxy, which is not answering");
  await expect(card.locator('.card-output')).toContainText('hearth serve');
  await saveScreenshot(page, 'static-host-web-fetch');
  expect(errors).toEqual([]);
  await context.close();
});

test('where the browser does not apply the sandbox\'s policy, no code runs and the card says why', async ({ browser }) => {
  const canary = await startCanary();
  const context = await browser.newContext({ baseURL: server.url });
  // Stands for a browser that ignores the sandbox page's meta policy: the
  // page the app hands its frame arrives without it. This host sends no
  // policy either, so nothing but the sandbox's own check stands between a
  // snippet and the network.
  await context.addInitScript(() => {
    const set = Element.prototype.setAttribute;
    Element.prototype.setAttribute = function (name, value) {
      if (name === 'srcdoc' && String(value).includes('<title>Hearth sandbox</title>')) {
        value = String(value).replace(/<meta http-equiv="Content-Security-Policy" content="[^"]*">/, '');
      }
      return set.call(this, name, value);
    };
  });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  try {
    await page.goto('/#/chat');
    await page.waitForSelector('body[data-ready]');
    const run = await runSkill(page, 'run_javascript', { code: `await fetch('${canary.url}/leak'); 'sent'` });
    expect(run.status).toBe('failed');
    expect(run.output).toContain("the sandbox could not start: the sandbox's no-network policy is not in force (the browser did not apply its Content-Security-Policy), so Hearth will not run code in it");
    await saveScreenshot(page, 'static-host-sandbox-refused');
    // Refused again on the next run: nothing is retried without the policy.
    const again = await runSkill(page, 'run_javascript', { code: '6 * 7' });
    expect(again.status).toBe('failed');
    expect(again.output).toContain('no-network policy is not in force');
    expect(canary.hits()).toEqual([]);
    expect(errors).toEqual([]);
  } finally {
    await context.close();
    await canary.close();
  }
});

test('Python runs on the first visit (a runaway loop is stopped by restarting it), and after a reload it can be interrupted', async ({ browser }) => {
  test.setTimeout(300_000);
  const { context, page, errors } = await openStatic(browser);
  expect(await page.evaluate(() => self.crossOriginIsolated)).toBe(false);
  const version = await runSkill(page, 'run_python', { code: 'import sys\nx = 7\nsys.version_info[:2]' }, { timeout: 150_000 });
  expect(version.status, version.output).toBe('completed');
  expect(version.output).toContain('(3, 14)');

  // No cross-origin isolation, so no interrupt: the worker is terminated.
  const loop = await runSkill(page, 'run_python', { code: 'while True:\n    pass', timeout_ms: 1000 }, { timeout: 150_000 });
  expect(loop.status).toBe('failed');
  expect(loop.output).toBe('timed out after 1.0 s: Python was stopped by restarting it, as this page cannot interrupt it (see Settings → Code); variables from earlier runs are gone');
  const after = await runSkill(page, 'run_python', { code: "print('x' in globals())" }, { timeout: 150_000 });
  expect(after.output).toBe('False\n');

  // Stop, likewise, can only end the worker here, and says so.
  const cards = page.locator('.result-card');
  const before = await cards.count();
  await runCommand(page, `/run_python ${JSON.stringify({ code: 'y = 1\nwhile True:\n    pass', timeout_ms: 120_000 })}`);
  const stop = page.locator('.composer').getByRole('button', { name: 'Stop' });
  await expect(stop).toBeVisible({ timeout: 150_000 });
  await stop.click();
  await expect(cards.nth(before).locator('.card-answer')).toHaveText(
    'stopped by you, by restarting Python, as this page cannot interrupt it (see Settings → Code); variables from earlier runs are gone',
    { timeout: 20_000 },
  );

  await page.getByRole('link', { name: 'Settings' }).click();
  const note = page.getByTestId('python-interrupt');
  await expect(note).toContainText(/^Unavailable( until you reload)?: /);
  await expect(note).toContainText('this host sends no cross-origin isolation headers (COOP and COEP)');
  await expect(note).toContainText('A Python run past its time limit, or stopped with Stop, is stopped by restarting Python, so its variables are lost.');
  // The service worker took over during this visit; reloading under it
  // brings the headers.
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 30_000 });
  await expect(note).toContainText('Unavailable until you reload');
  await note.scrollIntoViewIfNeeded();
  await saveScreenshot(page, 'static-host-interrupt-unavailable');
  await note.getByRole('button', { name: 'Reload now' }).click();
  await page.waitForSelector('body[data-ready]');
  expect(await page.evaluate(() => self.crossOriginIsolated)).toBe(true);

  await page.getByRole('link', { name: 'Chat' }).click();
  const again = await runSkill(page, 'run_python', { code: 'import sys\nkept = 1\nsys.version_info[:2]' }, { timeout: 150_000 });
  expect(again.output).toContain('(3, 14)');
  const interrupted = await runSkill(page, 'run_python', { code: 'while True:\n    pass', timeout_ms: 1000 });
  expect(interrupted.output).toBe('timed out after 1.0 s: Python was interrupted (KeyboardInterrupt); variables from earlier runs are kept');
  expect((await runSkill(page, 'run_python', { code: 'kept + 41' })).output).toContain('42');
  await page.getByRole('link', { name: 'Settings' }).click();
  await expect(page.getByTestId('python-interrupt')).toHaveText('Available: a Python run past its time limit, or stopped with Stop, is interrupted and keeps its variables.');
  expect(errors).toEqual([]);
  await context.close();
});

test('an Agent Skill runs its script, and a backup restores', async ({ browser }) => {
  test.setTimeout(240_000);
  const { context, page, errors } = await openStatic(browser, 'skills');
  await page.getByLabel('Import a skill folder').setInputFiles(path.join(repoRoot, 'e2e', 'fixtures', 'agent-skills', 'team-skills'));
  await expect(page.locator('.package')).toHaveCount(2);
  await page.getByRole('link', { name: 'Chat' }).click();
  await runCommand(page, '/activate_skill pdf-tools');
  const cards = page.locator('.result-card');
  await expect(cards.nth(0)).toHaveAttribute('data-status', 'completed');
  await runCommand(page, '/call_skill_tool {"skill":"pdf-tools","tool":"word_count","input":{"text":"one two  three four"}}');
  await expect(cards.nth(1)).toHaveAttribute('data-status', 'completed', { timeout: 150_000 });
  await expect(cards.nth(1).locator('.card-output').last()).toContainText('{"words":4}');

  await runCommand(page, '/notes {"action": "create", "title": "Backed up", "body": "from a static host"}');
  await expect(cards.last()).toHaveAttribute('data-status', 'completed');
  await page.getByRole('link', { name: 'Settings' }).click();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-static-backup-'));
  try {
    const downloading = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download backup' }).click();
    const file = path.join(tmp, 'backup.zip');
    await (await downloading).saveAs(file);
    await page.getByRole('button', { name: 'Clear all data…' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete everything' }).click();
    await expect(page.getByText('All data was deleted.')).toBeVisible();
    await page.getByLabel('Backup file').setInputFiles(file);
    const dialog = page.getByRole('dialog');
    await expect(dialog.getByRole('heading', { name: 'Restore this backup?' })).toBeVisible();
    await dialog.getByRole('radio', { name: /Replace/ }).check();
    await dialog.getByRole('button', { name: 'Replace everything here' }).click();
    await expect(page.getByTestId('restore-done')).toContainText('Restored:');
    await page.getByRole('link', { name: 'Notes' }).click();
    await expect(page.getByRole('option', { name: /Backed up/ })).toBeVisible();
    await page.getByRole('link', { name: 'Skills' }).click();
    await expect(page.locator('.package')).toHaveCount(2);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  expect(errors).toEqual([]);
  await context.close();
});

test('an MCP App renders, without the service worker and served by it', async ({ browser }) => {
  test.setTimeout(180_000);
  requirePeers();
  const apps = await startAppsServer();
  try {
    for await (const { visit, worker, page, errors } of visits(browser, '/#/servers')) {
      await page.getByLabel('Server URL').fill(apps.url);
      await page.getByLabel('Server name').fill('apps');
      await page.getByRole('button', { name: 'Add server' }).click();
      await expect(page.locator('.server-card[data-server="apps"]')).toHaveAttribute('data-status', 'connected', { timeout: 30_000 });
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Skills' }).click();
      await page.locator('.skill[data-skill="apps__greet"]').getByRole('switch').check();
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Chat' }).click();
      await runCommand(page, '/apps__greet {"name":"Ada"}');
      await page.getByRole('dialog', { name: 'greet' }).getByRole('button', { name: 'Allow once' }).click();
      // Without the worker the frame is sandboxed by its attribute and loads
      // from the host; with it, the worker serves it under a sandbox policy.
      const outer = page.locator('.mcp-app iframe.mcp-app-frame');
      if (worker) await expect(outer, visit).not.toHaveAttribute('sandbox', /./);
      else await expect(outer, visit).toHaveAttribute('sandbox', 'allow-scripts');
      const view = page.frameLocator('.mcp-app iframe.mcp-app-frame').frameLocator('iframe');
      await expect(view.locator('#result'), visit).toHaveText('Result: Hello, Ada! (structured: Ada)');
      await expect(view.locator('#network'), visit).toHaveText('network: blocked');
      await expect(view.locator('#isolation'), visit).toHaveText('host page: out of reach');
      await expect(view.locator('#navigation'), visit).toHaveText('top navigation: blocked');
      await page.getByRole('dialog', { name: 'app_counter' }).getByRole('button', { name: 'Allow once' }).click();
      await expect(view.locator('#counter'), visit).toHaveText(/^Counter: count \d+$/);
      if (worker) {
        await page.locator('.mcp-app').scrollIntoViewIfNeeded();
        await saveScreenshot(page, 'static-host-mcp-app');
      }
      expect(errors, visit).toEqual([]);
    }
  } finally {
    apps.stop();
  }
});

test('an artifact\'s page and chart render, without the service worker and served by it', async ({ browser }) => {
  test.setTimeout(180_000);
  const model = await startFakeModel('artifacts.json');
  try {
    for await (const { visit, worker, page, errors } of visits(browser, '/#/chat')) {
      await useProvider(page, model.base);

      await say(page, 'Please make a sales page');
      const made = page.locator('.tool-card[data-skill="create_artifact"]');
      await expect(made, visit).toHaveAttribute('data-state', 'completed');
      await page.getByRole('button', { name: 'Open artifact' }).first().click();
      // Without the worker the frame is sandboxed by its attribute and loads
      // from the host; with it, the worker serves it under a sandbox policy.
      const outer = page.locator('iframe.artifact-frame');
      if (worker) await expect(outer, visit).not.toHaveAttribute('sandbox', /./);
      else await expect(outer, visit).toHaveAttribute('sandbox', 'allow-scripts');
      // The page shows, and its own script ran inside the sandbox.
      const heading = page.frameLocator('.artifact-frame').frameLocator('iframe').locator('h1');
      await expect(heading, visit).toHaveText('Sales v1');
      await expect(heading, visit).toHaveAttribute('data-ran', 'yes');
      await page.keyboard.press('Escape');
      await expect(page.locator('.artifact-panel'), visit).toHaveCount(0);

      // A chart, drawn by Chart.js (the build's copy) inside the sandbox.
      const openers = page.getByRole('button', { name: 'Open artifact' });
      const before = await openers.count();
      await say(page, 'Now a chart of it');
      await expect(made, visit).toHaveCount(2);
      await expect(made.last(), visit).toHaveAttribute('data-state', 'completed');
      // The chart's card has its own opener once its result is in.
      await expect(openers, visit).toHaveCount(before + 1);
      await openers.last().click();
      await expect(page.getByRole('complementary', { name: 'Sales chart' }).locator('.artifact-kind'), visit).toHaveText('Chart');
      const drawn = async () => {
        const frame = page.frames().find((f) => f.url() === 'about:srcdoc' && f.parentFrame()?.url().endsWith('/sandbox/artifact.html'));
        return frame ? frame.evaluate(() => !!(window.Chart && window.Chart.getChart(document.getElementById('chart')))) : false;
      };
      await expect.poll(drawn, { message: visit }).toBe(true);
      if (worker) await saveScreenshot(page, 'static-host-artifact-chart');
      expect(errors, visit).toEqual([]);
    }
  } finally {
    await model.stop();
  }
});

test('the MCP sign-in page gets no handle on Hearth\'s tab, even where no policy cuts it off', async ({ browser }) => {
  test.setTimeout(120_000);
  requirePeers();
  const guarded = await startAppsServer(['--oauth']);
  // A first visit: no service worker yet, so no Cross-Origin-Opener-Policy
  // severs the popup from the tab; only opening it without an opener does.
  const context = await browser.newContext({ baseURL: server.url, serviceWorkers: 'block' });
  try {
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto('/#/servers');
    await page.waitForSelector('body[data-ready]');
    expect(await page.evaluate(() => self.crossOriginIsolated)).toBe(false);
    await page.getByLabel('Server URL').fill(guarded.url);
    await page.getByLabel('Server name').fill('guarded');
    await page.getByRole('button', { name: 'Add server' }).click();
    const banner = page.locator('.sign-in[data-server="guarded"]');
    await expect(banner).toContainText('asks you to sign in', { timeout: 30_000 });
    const [popup] = await Promise.all([
      page.waitForEvent('popup'),
      banner.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    await expect(popup.getByRole('heading')).toHaveText('Allow Hearth to use the test server?');
    // The authorization server's page cannot reach, read or navigate the
    // tab that opened it.
    expect(await popup.evaluate(() => window.opener === null)).toBe(true);
    await popup.getByRole('link', { name: 'Approve' }).click();
    await expect(page.locator('.server-card[data-server="guarded"]')).toHaveAttribute('data-status', 'connected', { timeout: 30_000 });
    expect(errors).toEqual([]);
  } finally {
    await context.close();
    guarded.stop();
  }
});
