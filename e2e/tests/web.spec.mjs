// The web skills as a person meets them: web_fetch through the proxy to a
// page server this test starts on 127.0.0.1 (allowed by the config's
// --allow-private-fetch), web_search against a fake SearXNG chosen in
// Settings, the domain lists, being offline, and an app opened without
// its proxy.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import path from 'node:path';
import { expectScreen, openApp, runCommand, saveScreenshot } from '../support/app.mjs';
import { e2ePorts, hearthDist } from '../support/env.mjs';
import { close, listen } from '../support/servers.mjs';

const ports = e2ePorts();
const staticPort = ports.app + 1002;
const ARTICLE = `http://127.0.0.1:${ports.pages}/article`;

const articleHtml = `<!doctype html>
<html><head><meta charset="utf-8"><title>The hearth: a history of the home fire</title></head>
<body>
  <nav><a href="/">Home</a></nav>
  <main>
    <h1>The hearth</h1>
    <p>A hearth is the place in a home where a fire is kept, for warmth and for cooking.
       For most of history it was the centre of the household.</p>
    <p>Read <a href="https://example.org/about">About this site</a> or the
       <a href="/next">next chapter</a>. <a href="javascript:alert(1)">Not a link</a>.</p>
  </main>
</body></html>`;

const seen = { pages: [], searx: [] };
let servers = [];

test.beforeAll(async () => {
  servers = await Promise.all([
    listen(ports.pages, (req, res) => {
      seen.pages.push({ url: req.url, agent: req.headers['user-agent'] || '' });
      if (req.url === '/article') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(articleHtml);
      } else {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('not here');
      }
    }),
    // SearXNG's JSON API: GET /search?q=…&format=json.
    listen(ports.searx, (req, res) => {
      const url = new URL(req.url, `http://127.0.0.1:${ports.searx}`);
      seen.searx.push(url.pathname + url.search);
      if (url.pathname !== '/search' || url.searchParams.get('format') !== 'json') {
        res.writeHead(403, { 'content-type': 'text/plain' });
        res.end('json format only');
        return;
      }
      const q = url.searchParams.get('q');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({
        query: q,
        results: [
          { url: 'https://en.wikipedia.org/wiki/Hearth', title: 'Hearth - Wikipedia', content: `A <b>hearth</b> is the place in a home where a fire is kept (${q}).` },
          { url: 'https://example.org/fireplaces', title: 'Fireplaces through the ages', content: 'From open fires to stoves.' },
          { url: 'https://ads.example.net/buy', title: 'Buy a hearth today', content: 'Sponsored.' },
        ],
      }));
    }),
  ]);
});

test.afterAll(async () => {
  await Promise.all(servers.map(close));
});

async function enableSkill(page, name) {
  await page.getByRole('link', { name: 'Skills' }).click();
  const toggle = page.getByRole('switch', { name: `Enable ${name}` });
  await toggle.check();
  await expect(toggle).toBeChecked();
}

async function runAndApprove(page, line, skillName) {
  await page.getByRole('link', { name: 'Chat' }).click();
  await runCommand(page, line);
  const dialog = page.getByRole('dialog', { name: skillName });
  await expect(dialog).toBeVisible();
  return dialog;
}

test('web_fetch: off by default, asks first, and reads the page as a card', async ({ page }) => {
  const errors = await openApp(page, 'skills');
  const before = seen.pages.length;

  // Off by default: a call is refused without asking and nothing is fetched.
  await expect(page.getByRole('switch', { name: 'Enable Web fetch' })).not.toBeChecked();
  await expect(page.getByRole('switch', { name: 'Enable Web search' })).not.toBeChecked();
  await page.getByRole('link', { name: 'Chat' }).click();
  await runCommand(page, `/web_fetch ${ARTICLE}`);
  const off = page.locator('.result-card[data-skill="web_fetch"][data-status="denied"]');
  await expect(off.locator('.card-output')).toHaveText('Web fetch is disabled; enable it in the Skills panel');
  await expect(page.getByRole('dialog')).toHaveCount(0);

  // Enabled, it asks first; denying the call fetches nothing either.
  await enableSkill(page, 'Web fetch');
  const denyDialog = await runAndApprove(page, `/web_fetch ${ARTICLE}`, 'Web fetch');
  await denyDialog.getByRole('button', { name: 'Deny' }).click();
  await expect(off).toHaveCount(2);
  expect(seen.pages.length).toBe(before);

  const dialog = await runAndApprove(page, `/web_fetch ${ARTICLE}`, 'Web fetch');
  await expect(dialog.getByLabel('Full arguments')).toContainText(ARTICLE);
  await expect(dialog).toContainText('Network');
  await dialog.getByRole('button', { name: 'Allow once' }).click();

  const card = page.locator('.result-card[data-skill="web_fetch"]:not([data-status="denied"])');
  await expect(card).toHaveAttribute('data-status', 'completed');
  const title = card.locator('a.web-title');
  await expect(title).toHaveText('The hearth: a history of the home fire');
  await expect(title).toHaveAttribute('href', ARTICLE);
  await expect(title).toHaveAttribute('target', '_blank');
  await expect(title).toHaveAttribute('rel', 'noopener noreferrer');
  await expect(card.locator('.web-host')).toHaveText('127.0.0.1');
  await expect(card.locator('.web-excerpt')).toContainText('A hearth is the place in a home where a fire is kept');

  const about = card.locator('.web-links').getByRole('link', { name: 'About this site' });
  await expect(about).toHaveAttribute('href', 'https://example.org/about');
  await expect(about).toHaveAttribute('rel', 'noopener noreferrer');
  await expect(card.locator('.web-links').getByRole('link', { name: 'next chapter' }))
    .toHaveAttribute('href', `http://127.0.0.1:${ports.pages}/next`);
  // No link anywhere on the card runs script.
  const hrefs = await card.locator('a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
  expect(hrefs.filter((h) => !/^https?:\/\//.test(h))).toEqual([]);

  // The whole page is kept on the card.
  await card.getByText(/Page text \(\d+ characters\)/).click();
  await expect(card.locator('.web-text pre')).toContainText('For most of history it was the centre of the household.');
  await card.getByText(/Page text/).click();

  // One request reached the page server, from the proxy.
  expect(seen.pages.slice(before).map((r) => r.url)).toEqual(['/article']);
  expect(seen.pages[before].agent).toMatch(/^Hearth\//);
  await saveScreenshot(page, 'web-fetch-card');
  expect(errors).toEqual([]);
});

test('the domain lists: errors by line, saved, kept, and a denied host is refused', async ({ page }) => {
  await openApp(page, 'skills');
  await enableSkill(page, 'Web fetch');
  const editor = page.locator('.domain-lists[data-skill="web_fetch"]');
  await editor.locator('summary').click();
  await expect(editor.locator('summary .chip')).toHaveText('any domain');

  const deny = editor.getByRole('textbox', { name: 'Denylist for Web fetch' });
  await deny.fill('http://127.0.0.1/page\n*.ads.example\nbad..name');
  await expect(editor.locator('.line-errors li')).toHaveText([
    /Line 1\s+write just the domain, like example.com, not a URL/,
    /Line 3\s+"bad..name" is not a valid domain/,
  ]);
  await expect(deny).toHaveAttribute('aria-invalid', 'true');
  await expect(editor.getByRole('button', { name: 'Save lists' })).toBeDisabled();
  await expect(editor).toContainText('2 lines to fix before saving');
  await saveScreenshot(page, 'domain-editor-errors');

  // International names are typed as they read and shown in the form
  // they are compared in.
  await deny.fill('# the test server\n127.0.0.1\n*.ads.example\nwerbung.bücher.example');
  await expect(editor.locator('.line-errors li')).toHaveCount(0);
  await expect(editor.locator('.ascii-forms li')).toHaveText([
    'werbung.bücher.example is compared as werbung.xn--bcher-kva.example',
  ]);
  await editor.getByRole('button', { name: 'Save lists' }).click();
  await expect(editor.getByRole('status')).toHaveText('Saved. The next call uses these lists.');
  await expect(editor.locator('summary .chip')).toHaveText('3 denied');
  await saveScreenshot(page, 'domain-editor');

  // Kept across a reload, comments and all.
  await page.reload();
  await page.waitForSelector('body[data-ready]');
  await editor.locator('summary').click();
  await expect(deny).toHaveValue('# the test server\n127.0.0.1\n*.ads.example\nwerbung.bücher.example');

  const before = seen.pages.length;
  const dialog = await runAndApprove(page, `/web_fetch ${ARTICLE}`, 'Web fetch');
  await dialog.getByRole('button', { name: 'Allow once' }).click();
  const card = page.locator('.result-card[data-skill="web_fetch"]');
  await expect(card).toHaveAttribute('data-status', 'failed');
  await expect(card.locator('.card-output')).toHaveText(
    "127.0.0.1 is on web_fetch's denylist (entry '127.0.0.1'); change the list in the Skills panel to allow it",
  );
  expect(seen.pages.length).toBe(before);
});

test('web_search: the no-backend message, a SearXNG chosen in Settings, results, removal', async ({ page }) => {
  await openApp(page, 'skills');
  await enableSkill(page, 'Web search');

  // 1. Nothing configured: the card says how to set one up.
  let dialog = await runAndApprove(page, '/web_search hearth', 'Web search');
  await dialog.getByRole('button', { name: 'Allow once' }).click();
  const failed = page.locator('.result-card[data-skill="web_search"][data-status="failed"]');
  await expect(failed.locator('.card-output')).toContainText('No web search backend is set up');
  await expect(failed.locator('.card-output')).toContainText("Choose one in Hearth's Settings (Web search)");
  await saveScreenshot(page, 'web-search-no-backend');
  await failed.getByRole('link', { name: 'Set up web search in Settings' }).click();

  // 2. Choose the test's SearXNG in Settings.
  await expect(page.getByRole('heading', { name: 'Web search' })).toBeVisible();
  const status = page.getByTestId('search-backend-status');
  await expect(status).toHaveText('No search backend is set up.');
  await page.getByRole('button', { name: 'Use this backend' }).click();
  await expect(page.getByRole('alert')).toContainText('Enter the address of your SearXNG');
  await page.getByLabel('SearXNG address').fill('ftp://127.0.0.1/');
  await page.getByRole('button', { name: 'Use this backend' }).click();
  await expect(page.getByRole('alert')).toContainText('Not saved:');
  await expect(page.getByRole('alert')).toContainText('must be http or https');
  await page.getByLabel('SearXNG address').fill(`http://127.0.0.1:${ports.searx}`);
  await page.getByRole('button', { name: 'Use this backend' }).click();
  await expect(status).toHaveText(`Using SearXNG at http://127.0.0.1:${ports.searx}/ (chosen here).`);
  await saveScreenshot(page, 'search-settings');

  // 3. Search: readable results with links, minus what the lists deny.
  await page.getByRole('link', { name: 'Skills' }).click();
  const editor = page.locator('.domain-lists[data-skill="web_search"]');
  await editor.locator('summary').click();
  await editor.getByRole('textbox', { name: 'Denylist for Web search' }).fill('ads.example.net');
  await editor.getByRole('button', { name: 'Save lists' }).click();
  await expect(editor.getByRole('status')).toBeVisible();

  dialog = await runAndApprove(page, '/web_search hearth fire', 'Web search');
  await dialog.getByRole('button', { name: 'Allow once' }).click();
  const done = page.locator('.result-card[data-skill="web_search"][data-status="completed"]');
  const results = done.locator('.web-result');
  await expect(results).toHaveCount(2);
  const first = results.nth(0).getByRole('link', { name: 'Hearth - Wikipedia' });
  await expect(first).toHaveAttribute('href', 'https://en.wikipedia.org/wiki/Hearth');
  await expect(first).toHaveAttribute('target', '_blank');
  await expect(first).toHaveAttribute('rel', 'noopener noreferrer');
  await expect(results.nth(0).locator('.web-host')).toHaveText('en.wikipedia.org');
  await expect(results.nth(0).locator('.web-snippet')).toHaveText('A hearth is the place in a home where a fire is kept (hearth fire).');
  await expect(results.nth(1)).toContainText('Fireplaces through the ages');
  await expect(done.locator('.web-hidden')).toHaveText("1 more hidden by web_search's domain lists.");
  expect(seen.searx.at(-1)).toBe('/search?q=hearth+fire&format=json');
  await saveScreenshot(page, 'web-search-card');

  // 4. Remove it again (after a confirmation).
  await page.getByRole('link', { name: 'Settings', exact: true }).click();
  await expect(status).toContainText('chosen here');
  await page.getByRole('button', { name: 'Remove this backend…' }).click();
  const confirm = page.getByRole('alertdialog', { name: 'Remove the search backend?' });
  await confirm.getByRole('button', { name: 'Remove' }).click();
  await expect(status).toHaveText('No search backend is set up.');
});

test('offline: the shell shows it, the Skills panel notes it, and the skill says so', { tag: '@baseline' }, async ({ page, context }) => {
  await openApp(page, 'skills');
  await enableSkill(page, 'Web fetch');
  const indicator = page.locator('.offline-indicator');
  await expect(indicator).toBeHidden();
  // Places other than Chat load their code on first opening, from the
  // network or from the service worker's precache; a worker that
  // controls the page has finished installing, so every place's code is
  // cached before the network goes.
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 30_000 });

  await context.setOffline(true);
  await expect(indicator).toBeVisible();
  await expect(indicator).toHaveText('Offline');
  await expect(page.locator('.tier[data-tier="network"] .offline-note')).toContainText('You are offline.');
  await expectScreen(page, 'offline-skills');
  // The indicator itself, in the shell's sidebar.
  await expectScreen(page, 'offline-indicator', { part: page.getByRole('navigation', { name: 'Main' }) });

  // Offline, the call ends before the permission layer would ask about
  // something that cannot work: no dialog, a failed card that says why.
  await page.getByRole('link', { name: 'Chat' }).click();
  await runCommand(page, `/web_fetch ${ARTICLE}`);
  const card = page.locator('.result-card[data-skill="web_fetch"]');
  await expect(card).toHaveAttribute('data-status', 'failed');
  await expect(page.getByRole('dialog', { name: /Web fetch/ })).toHaveCount(0);
  await expect(card.locator('.card-output')).toContainText(
    'You are offline, so Web fetch cannot reach the network.',
  );
  await saveScreenshot(page, 'offline-card');

  // Everything that does not need the network keeps working.
  await runCommand(page, '/calc 15% of 847');
  await expect(page.locator('.result-card[data-skill="calculator"] .card-output')).toHaveText('127.05');
  await runCommand(page, '/notes {"action":"create","title":"Written offline"}');
  await expect(page.locator('.result-card[data-skill="notes"]')).toHaveAttribute('data-status', 'completed');
  await page.getByRole('link', { name: 'Notes', exact: true }).click();
  await expect(page.getByText('Written offline').first()).toBeVisible();
  await expect(indicator).toBeVisible();

  await context.setOffline(false);
  await expect(indicator).toBeHidden();
});

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.wasm': 'application/wasm',
  '.css': 'text/css',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.webmanifest': 'application/manifest+json',
};

test('opened from a plain static server, the web skills say the proxy is missing', async ({ page }) => {
  // A static file server with no API: what someone gets from `python -m http.server`.
  const root = path.resolve(hearthDist);
  const plain = await listen(staticPort, (req, res) => {
    const rel = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const file = path.join(root, rel === '/' ? 'index.html' : rel);
    if (!file.startsWith(root) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('Not Found');
      return;
    }
    res.writeHead(200, { 'content-type': MIME[path.extname(file)] || 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  try {
    await page.goto(`http://127.0.0.1:${staticPort}/#/skills`);
    await page.waitForSelector('body[data-ready]');
    await enableSkill(page, 'Web fetch');
    const dialog = await runAndApprove(page, '/web_fetch https://example.com/', 'Web fetch');
    await dialog.getByRole('button', { name: 'Allow once' }).click();
    const card = page.locator('.result-card[data-skill="web_fetch"]');
    await expect(card).toHaveAttribute('data-status', 'failed');
    await expect(card.locator('.card-output')).toContainText("web_fetch needs Hearth's local proxy, which is not answering.");
    await expect(card.locator('.card-output')).toContainText('hearth serve');

    await page.getByRole('link', { name: 'Settings' }).click();
    await expect(page.getByTestId('search-backend-status')).toContainText("needs Hearth's local proxy");
  } finally {
    await close(plain);
  }
});
