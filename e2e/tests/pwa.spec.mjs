// Local-first for real: install criteria, offline after one visit with the
// server gone, and updates that wait for the person. These tests start and
// stop their own `hearth serve` on 127.0.0.1 (see support/serve.mjs).
import { test, expect, chromium } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCommand, saveScreenshot } from '../support/app.mjs';
import { chromiumLaunchOptions, hearthDist, repoRoot } from '../support/env.mjs';
import { requirePeers, startAppsServer } from '../support/mcp.mjs';
import { grantFolder, runSkill, withoutPickers } from '../support/sandbox.mjs';
import { buildIdOf, buildWithRuntime, nextBuild, startServe } from '../support/serve.mjs';
import crypto from 'node:crypto';

const project = path.join(repoRoot, 'e2e', 'fixtures', 'project');

/// Opens the app at `url` and waits until the service worker controls it
/// and has the whole shell cached.
async function openControlled(page, url, place = 'chat') {
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${url}/#/${place}`);
  await page.waitForSelector('body[data-ready]');
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 30_000 });
  await page.waitForFunction(
    async () => {
      const keys = await caches.keys();
      const shell = keys.find((k) => k.startsWith('hearth-shell-'));
      if (!shell) return false;
      const cached = await (await caches.open(shell)).keys();
      return cached.length > 5;
    },
    null,
    { timeout: 30_000 },
  );
  return errors;
}

/// PNG width and height from its IHDR chunk.
function pngSize(bytes) {
  const b = Buffer.from(bytes);
  return [b.readUInt32BE(16), b.readUInt32BE(20)];
}

test('Chromium finds Hearth installable: manifest, icons, a worker controlling the page', async () => {
  // Chromium never offers to install from an incognito profile (Playwright's
  // default contexts are), so this test runs in a real, persistent profile.
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-install-profile-'));
  const context = await chromium.launchPersistentContext(profile, {
    ...chromiumLaunchOptions(),
    viewport: { width: 1280, height: 820 },
  });
  const page = context.pages()[0] || (await context.newPage());
  const server = await startServe();
  try {
    const errors = await openControlled(page, server.url);
    const cdp = await page.context().newCDPSession(page);
    const { installabilityErrors } = await cdp.send('Page.getInstallabilityErrors');
    expect(installabilityErrors).toEqual([]);
    const { errors: manifestErrors } = await cdp.send('Page.getAppManifest');
    expect(manifestErrors).toEqual([]);

    const href = await page.locator('link[rel=manifest]').getAttribute('href');
    const manifest = await (await page.request.get(`${server.url}${href}`)).json();
    expect({
      name: manifest.name,
      short_name: manifest.short_name,
      start_url: manifest.start_url,
      scope: manifest.scope,
      display: manifest.display,
      theme_color: manifest.theme_color,
      background_color: manifest.background_color,
      shortcuts: manifest.shortcuts.map((s) => [s.name, s.url]),
    }).toEqual({
      name: 'Hearth',
      short_name: 'Hearth',
      start_url: '/',
      scope: '/',
      display: 'standalone',
      theme_color: '#d9601c',
      background_color: '#faf8f5',
      shortcuts: [
        ['New chat', '/#/chat/new'],
        ['Notes', '/#/notes'],
        ['Tasks', '/#/tasks'],
      ],
    });
    const pngs = manifest.icons.filter((i) => i.type === 'image/png');
    const seen = [];
    for (const icon of pngs) {
      const res = await page.request.get(`${server.url}${icon.src}`);
      expect(res.headers()['content-type']).toBe('image/png');
      const [w, h] = pngSize(await res.body());
      expect(`${w}x${h}`).toBe(icon.sizes);
      seen.push(`${icon.sizes} ${icon.purpose}`);
    }
    expect(seen.sort()).toEqual(['192x192 any', '192x192 maskable', '512x512 any', '512x512 maskable']);

    const worker = await page.evaluate(async () => {
      const reg = await navigator.serviceWorker.getRegistration();
      return {
        script: new URL(navigator.serviceWorker.controller.scriptURL).pathname,
        scope: new URL(reg.scope).pathname,
        state: reg.active.state,
        isolated: self.crossOriginIsolated,
      };
    });
    expect(worker).toEqual({ script: '/sw.js', scope: '/', state: 'activated', isolated: true });

    await page.getByRole('link', { name: 'Settings' }).click();
    await expect(page.getByTestId('offline-status')).toContainText('Ready: Hearth opens and runs without a network');
    // Usage and quota, from navigator.storage.estimate().
    await expect(page.getByTestId('storage-usage')).toHaveText(/^[\d.]+ (B|KB|MB) of [\d.]+ (MB|GB|TB) available$/);
    // Persistence: explained, asked for on a click; the browser's answer is shown.
    const persist = page.getByTestId('persist-status');
    await expect(persist).toContainText('the browser may delete Hearth\'s data without asking');
    await cdp.send('Browser.grantPermissions', { origin: server.url, permissions: ['durableStorage'] });
    await persist.getByRole('button', { name: 'Ask the browser to keep it' }).click();
    await expect(persist).toContainText('Yes: the browser will not delete Hearth\'s data to free space.');
    expect(await page.evaluate(() => navigator.storage.persisted())).toBe(true);
    await expect(page.getByTestId('build')).toHaveText(buildIdOf(hearthDist));
    expect(errors).toEqual([]);
  } finally {
    await server.stop();
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
});

test('after one visit, Hearth runs with the network off and the server stopped', async ({ page, context }) => {
  const server = await startServe();
  let stopped = false;
  try {
    const errors = await openControlled(page, server.url);
    await runCommand(page, '/calc 2+2');
    await expect(page.locator('.result-card .card-output')).toHaveText('4');

    await context.setOffline(true);
    await server.stop();
    stopped = true;
    // The server is really gone.
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();

    await page.reload();
    await page.waitForSelector('body[data-ready]');
    await expect(page.getByRole('status').filter({ hasText: 'Offline' })).toBeVisible();
    expect(await page.evaluate(() => self.crossOriginIsolated)).toBe(true);

    // Core skills: the calculator, and notes that survive a reload.
    await runCommand(page, '/calc 15% of 847');
    await expect(page.locator('.result-card .card-output').last()).toHaveText('127.05');
    await runCommand(page, '/notes {"action": "create", "title": "Written offline", "body": "no network needed"}');
    await expect(page.locator('.result-card').last()).toHaveAttribute('data-status', 'completed');
    await page.getByRole('link', { name: 'Notes' }).click();
    await expect(page.getByRole('option', { name: /Written offline/ })).toBeVisible();
    await page.reload();
    await page.waitForSelector('body[data-ready]');
    await expect(page.getByRole('option', { name: /Written offline/ })).toBeVisible();

    // A network-tier skill says it is offline instead of asking or failing oddly.
    await page.getByRole('link', { name: 'Chat' }).click();
    await runCommand(page, '/web_fetch https://example.com/');
    const failed = page.locator('.result-card').last();
    await expect(failed).toHaveAttribute('data-status', 'failed');
    await expect(failed.locator('.card-output')).toContainText('You are offline, so Web fetch cannot reach the network');
    await expect(page.getByRole('dialog')).toHaveCount(0);
    await saveScreenshot(page, 'offline-chat');
    expect(errors).toEqual([]);
  } finally {
    await context.setOffline(false);
    if (!stopped) await server.stop();
  }
});

// The places other than Chat load their code on demand (src/places.rs):
// each is a wasm chunk the first visit does not fetch. The service worker
// precaches them after the first render, so a visit that opened only Chat
// is enough for every place, panel and editor to open offline.
test('after a visit that opened only Chat, every place loads its chunk with the network off and the server stopped', async ({ page, context }) => {
  test.setTimeout(120_000);
  const server = await startServe();
  let stopped = false;
  const wasm = [];
  page.on('request', (r) => {
    const name = new URL(r.url()).pathname;
    if (name.endsWith('.wasm') && !name.startsWith('/pyodide/') && !name.startsWith('/llama/')) wasm.push(name);
  });
  try {
    const errors = await openControlled(page, server.url);
    // The first render needed only the main module: a first visit fetches
    // the chunks into memory only after it (src/places.rs, warm_chunks).
    expect(wasm.filter((n) => n.startsWith('/hearth-app-'))).toHaveLength(1);
    const beforeRender = await page.evaluate(() => {
      const ready = performance.getEntriesByName('hearth-ready')[0].startTime;
      return performance
        .getEntriesByType('resource')
        .filter((r) => new URL(r.name).pathname.endsWith('.wasm') && r.startTime < ready)
        .map((r) => new URL(r.name).pathname)
        .filter((n) => !n.startsWith('/hearth-app-') && !n.startsWith('/pyodide/') && !n.startsWith('/llama/'));
    });
    expect(beforeRender).toEqual([]);
    // A stored Agent Skills package: reading it at start is a chunk too.
    await page.getByRole('link', { name: 'Skills', exact: true }).click();
    await page
      .getByLabel('Import a skill archive')
      .setInputFiles(path.join(repoRoot, 'e2e', 'fixtures', 'agent-skills', 'csv-helper.zip'));
    await expect(page.getByRole('status', { name: 'Import result' })).toContainText('Imported 1 skill.');
    await page.getByRole('link', { name: 'Chat', exact: true }).click();

    await context.setOffline(true);
    await server.stop();
    stopped = true;
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
    wasm.length = 0;
    await page.reload();
    await page.waitForSelector('body[data-ready]');
    await expect(page.getByRole('status').filter({ hasText: 'Offline' })).toBeVisible();

    const places = [
      ['Notes', 'Notes'],
      ['Tasks', 'Tasks'],
      ['Memory', 'Memory'],
      ['Skills', 'Skills'],
      ['Servers', 'Servers'],
      ['Activity', 'Activity'],
      ['Settings', 'Settings'],
    ];
    for (const [link, title] of places) {
      await page.getByRole('link', { name: link, exact: true }).click();
      await expect(page.getByRole('heading', { level: 1, name: title })).toBeVisible();
      await expect(page.getByRole('alert').filter({ hasText: 'could not be opened' })).toHaveCount(0);
    }
    // Each place came from a chunk of its own, served by the worker.
    for (const chunk of ['packages', 'notes', 'tasks', 'memory', 'skills', 'servers', 'activity', 'settings']) {
      expect(wasm.some((n) => n.startsWith(`/split_${chunk}-`)), `${chunk}'s chunk in ${wasm}`).toBe(true);
    }
    // Sync is off here: its chunk was neither fetched nor cached.
    expect(wasm.some((n) => n.startsWith('/split_sync-')), `sync's chunk in ${wasm}`).toBe(false);
    const cachedUrls = await page.evaluate(async () => {
      const out = [];
      for (const name of await caches.keys()) {
        for (const r of await (await caches.open(name)).keys()) out.push(new URL(r.url).pathname);
      }
      return out;
    });
    expect(cachedUrls.filter((u) => u.startsWith('/split_sync-'))).toEqual([]);

    // Settings' panels: providers, files, code, storage, backup.
    for (const name of ['Model provider', 'Assistant', 'Files', 'Code', 'Storage', 'Backup and restore']) {
      await expect(page.getByRole('heading', { level: 2, name, exact: true })).toBeVisible();
    }
    // The Agent Skills editor and an MCP server form.
    await page.getByRole('link', { name: 'Skills', exact: true }).click();
    // The package was read at start, and the Skills place lists it.
    await expect(page.locator('.package[data-package="csv-helper"]')).toContainText('archive csv-helper.zip');
    await page.getByRole('button', { name: 'New skill' }).click();
    await expect(page.getByRole('heading', { name: 'New skill' })).toBeVisible();
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('link', { name: 'Servers', exact: true }).click();
    await expect(page.getByRole('heading', { name: 'Add a server' })).toBeVisible();
    // Back to Chat, which still answers.
    await page.getByRole('link', { name: 'Chat', exact: true }).click();
    await runCommand(page, '/calc 6*7');
    await expect(page.locator('.result-card .card-output').last()).toHaveText('42');
    await saveScreenshot(page, 'offline-every-place');
    expect(errors).toEqual([]);
  } finally {
    await context.setOffline(false);
    if (!stopped) await server.stop();
  }
});

test('the Python runtime is never fetched at install: it is cached on first use or on request, then served offline', async ({
  page,
  context,
}) => {
  // A stand-in runtime, small and quick to check byte for byte: the worker
  // treats every file under pyodide/ alike, whatever it holds.
  const wasm = crypto.randomBytes(3_000_000);
  const loader = Buffer.from('export const loaded = "stand-in runtime";\n');
  const dist = buildWithRuntime({ 'pyodide.asm.wasm': wasm, 'pyodide.mjs': loader });
  const server = await startServe({ dist });
  let stopped = false;
  const cachedPython = () =>
    page.evaluate(async () => {
      const name = (await caches.keys()).find((k) => k.startsWith('hearth-python-'));
      if (!name) return [];
      return (await (await caches.open(name)).keys()).map((r) => new URL(r.url).pathname).sort();
    });
  try {
    await openControlled(page, server.url, 'settings');
    const python = page.getByTestId('python-cache');
    await expect(python).toContainText('Not kept offline yet (3.0 MB)');
    expect(await cachedPython()).toEqual([]);

    // First use: the file passes through the worker, which keeps a verified copy.
    const text = await page.evaluate(async () => (await fetch('/pyodide/pyodide.mjs')).text());
    expect(text).toBe(loader.toString());
    await expect.poll(cachedPython).toEqual(['/pyodide/pyodide.mjs']);

    // The rest on request, with progress, until it is all there.
    await python.getByRole('button', { name: 'Download now' }).click();
    await expect(python).toContainText('Ready offline (3.0 MB)', { timeout: 60_000 });
    expect(await cachedPython()).toEqual(['/pyodide/pyodide.asm.wasm', '/pyodide/pyodide.mjs']);
    await saveScreenshot(page, 'python-ready-offline');

    await context.setOffline(true);
    await server.stop();
    stopped = true;
    await page.reload();
    await page.waitForSelector('body[data-ready]');
    const digest = await page.evaluate(async () => {
      const body = await (await fetch('/pyodide/pyodide.asm.wasm')).arrayBuffer();
      const hash = await crypto.subtle.digest('SHA-256', body);
      return Array.from(new Uint8Array(hash), (b) => b.toString(16).padStart(2, '0')).join('');
    });
    expect(digest).toBe(crypto.createHash('sha256').update(wasm).digest('hex'));
  } finally {
    await context.setOffline(false);
    if (!stopped) await server.stop();
    fs.rmSync(dist, { recursive: true, force: true });
  }
});

test('after one visit, code runs with the server stopped and the network cut: Python, files, interrupts, JavaScript and an MCP App', async ({ browser }) => {
  test.setTimeout(300_000);
  requirePeers();
  const apps = await startAppsServer();
  const server = await startServe();
  const context = await browser.newContext();
  await withoutPickers(context);
  const page = await context.newPage();
  let stopped = false;
  try {
    const errors = await openControlled(page, server.url);
    // The visit: Python loads once, and its runtime passes through the
    // worker, which keeps a verified copy.
    const first = await runSkill(page, 'run_python', { code: 'print(sum(range(10)))' }, { timeout: 150_000 });
    expect(first.output).toBe('45\n');
    await page.getByRole('link', { name: 'Settings' }).click();
    await expect(page.getByTestId('python-cache')).toContainText('Ready offline', { timeout: 60_000 });
    // A folder granted to code (copied into the origin's private file system).
    await grantFolder(page, project);
    // An MCP server whose tool comes with an app.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Servers' }).click();
    await page.getByLabel('Server URL').fill(apps.url);
    await page.getByLabel('Server name').fill('apps');
    await page.getByRole('button', { name: 'Add server' }).click();
    await expect(page.locator('.server-card[data-server="apps"]')).toHaveAttribute('data-status', 'connected', { timeout: 30_000 });
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Skills' }).click();
    await page.locator('.skill[data-skill="apps__greet"]').getByRole('switch').check();

    // Hearth's server goes away and the browser's network is cut. The MCP
    // server stands for one on this machine: the test relays the page's
    // requests for it to its fixture server, the only thing that answers.
    await context.route(`${new URL(apps.url).origin}/**`, (route) => route.fetch().then((response) => route.fulfill({ response })));
    await context.setOffline(true);
    await server.stop();
    stopped = true;
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
    await page.goto(`${server.url}/#/chat/new`);
    await page.reload();
    await page.waitForSelector('body[data-ready]');
    await expect(page.getByRole('status').filter({ hasText: 'Offline' })).toBeVisible();
    expect(await page.evaluate(() => self.crossOriginIsolated)).toBe(true);

    const version = await runSkill(page, 'run_python', { code: 'import sys\nkept = 1\nsys.version_info[:2]' }, { timeout: 150_000 });
    expect(version.status, version.output).toBe('completed');
    expect(version.output).toContain('(3, 14)');
    const read = await runSkill(page, 'run_python', {
      code: "print(open('/mnt/data/project/data.csv').readline().strip())",
      files: ['project/data.csv'],
    });
    expect(read.output).toBe('city,population\n');
    const loop = await runSkill(page, 'run_python', { code: 'while True:\n    pass', timeout_ms: 1000 });
    expect(loop.output).toBe('timed out after 1.0 s: Python was interrupted (KeyboardInterrupt); variables from earlier runs are kept');
    expect((await runSkill(page, 'run_python', { code: 'kept + 41' })).output).toContain('42');
    const js = await runSkill(page, 'run_javascript', { code: '6 * 7' });
    expect(js.output).toContain('42');

    await runCommand(page, '/apps__greet {"name":"Ada"}');
    await page.getByRole('dialog', { name: 'greet' }).getByRole('button', { name: 'Allow once' }).click();
    const view = page.frameLocator('.mcp-app iframe.mcp-app-frame').frameLocator('iframe');
    await expect(view.locator('#result')).toHaveText('Result: Hello, Ada! (structured: Ada)');
    await expect(view.locator('#network')).toHaveText('network: blocked');
    await page.getByRole('dialog', { name: 'app_counter' }).getByRole('button', { name: 'Allow once' }).click();
    await expect(view.locator('#counter')).toHaveText('Counter: count 1');
    await page.locator('.mcp-app').scrollIntoViewIfNeeded();
    await saveScreenshot(page, 'offline-code');
    expect(errors).toEqual([]);
  } finally {
    // The app's subscription stream to the MCP server is still open.
    await context.unrouteAll({ behavior: 'ignoreErrors' });
    await context.setOffline(false);
    if (!stopped) await server.stop();
    await context.close();
    apps.stop();
  }
});

test('a new build installs in the background and waits for "Reload to update"', async ({ browser }) => {
  const next = nextBuild('next version');
  const oldId = buildIdOf(hearthDist);
  const newId = buildIdOf(next);
  expect(newId).not.toBe(oldId);
  const context = await browser.newContext();
  const page = await context.newPage();
  let server = await startServe();
  const port = server.port;
  try {
    await openControlled(page, server.url, 'notes');
    await page.getByRole('button', { name: 'New note' }).click();
    await expect(page.getByRole('option')).toHaveCount(1);
    const other = await context.newPage();
    await other.goto(`${server.url}/#/chat`);
    await other.waitForSelector('body[data-ready]');

    // The next version goes up on the same address.
    await server.stop();
    server = await startServe({ port, dist: next });
    await page.evaluate(async () => (await navigator.serviceWorker.getRegistration()).update());
    const banner = page.getByTestId('update-banner');
    await expect(banner).toContainText('A new version of Hearth is ready.', { timeout: 30_000 });
    await expect(banner.getByRole('button', { name: 'Reload to update' })).toBeVisible();
    await saveScreenshot(page, 'update-banner');

    // Nothing changed behind the person's back: both tabs still run the old build and work.
    for (const p of [page, other]) {
      expect(await p.evaluate(() => document.querySelector('meta[name=hearth-build]').content)).toBe(oldId);
    }
    await runCommand(other, '/calc 6*7');
    await expect(other.locator('.result-card .card-output')).toHaveText('42');

    await banner.getByRole('button', { name: 'Reload to update' }).click();
    await page.waitForFunction((id) => document.querySelector('meta[name=hearth-build]')?.content === id, newId, {
      timeout: 30_000,
    });
    await page.waitForSelector('body[data-ready]');
    await expect(page.getByRole('option')).toHaveCount(1);
    await expect(page.getByTestId('update-banner')).toHaveCount(0);

    // The other tab was not reloaded; it is told, and still works.
    await expect(other.getByTestId('update-banner')).toContainText('Hearth was updated in another tab');
    expect(await other.evaluate(() => document.querySelector('meta[name=hearth-build]').content)).toBe(oldId);
    await runCommand(other, '/calc 1+1');
    await expect(other.locator('.result-card .card-output').last()).toHaveText('2');

    // The old build's cache stays while that tab runs it.
    const names = await page.evaluate(() => caches.keys());
    expect(names.filter((n) => n.startsWith('hearth-shell-')).sort()).toEqual(
      [`hearth-shell-${oldId}`, `hearth-shell-${newId}`].sort(),
    );
    await other.close();
    // Once no tab runs the old build, its cache goes (the next tab start tidies up).
    const third = await context.newPage();
    await third.goto(`${server.url}/#/chat`);
    await third.waitForSelector('body[data-ready]');
    await expect
      .poll(async () => (await page.evaluate(() => caches.keys())).filter((n) => n.startsWith('hearth-shell-')), {
        timeout: 20_000,
      })
      .toEqual([`hearth-shell-${newId}`]);
  } finally {
    await server.stop();
    await context.close();
    fs.rmSync(next, { recursive: true, force: true });
  }
});
