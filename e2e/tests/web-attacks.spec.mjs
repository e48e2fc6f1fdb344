// Attacks on the network tier from where they would really come from: a
// web page of another origin open in the same browser, a local program
// forging headers (or a DNS-rebound name), and the app itself being asked
// (by a person or a model) to fetch private addresses. Every one must be
// refused, and nothing may reach the servers behind the proxy.
import { test, expect } from '@playwright/test';
import { openApp, runCommand, saveScreenshot } from '../support/app.mjs';
import { e2ePorts, e2eKey } from '../support/env.mjs';
import { appData } from '../support/sandbox.mjs';
import { close, listen, rawRequest } from '../support/servers.mjs';
import { expectOnlyRunsAdded } from '../support/stores.mjs';

const ports = e2ePorts();
const APP = `http://127.0.0.1:${ports.app}`;
// The page server is on the test allowlist (--allow-private-fetch), so
// only the guard stands between a foreign page and it.
const PAGES = `http://127.0.0.1:${ports.pages}`;
// Not on any allowlist: a private service the proxy must never reach.
const secretPort = ports.app + 1003;

const seen = { pages: [], secret: [] };
let servers = [];

const attackerHtml = `<!doctype html><html><head><meta charset="utf-8"><title>Free wallpapers</title></head>
<body><h1>Nothing to see here</h1></body></html>`;

test.beforeAll(async () => {
  servers = await Promise.all([
    listen(ports.pages, (req, res) => {
      seen.pages.push(req.url);
      if (req.url === '/attacker') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(attackerHtml);
      } else if (req.url === '/to-secret') {
        // A public-looking page that redirects into the private network.
        res.writeHead(302, { location: `http://127.0.0.1:${secretPort}/secret` });
        res.end();
      } else {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('the page server answered');
      }
    }),
    listen(secretPort, (req, res) => {
      seen.secret.push(req.url);
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('SECRET');
    }),
  ]);
});

test.afterAll(async () => {
  await Promise.all(servers.map(close));
});

test('a page of another origin in the same browser gets neither the token nor a fetch', async ({ page }) => {
  // The statuses the proxy really sent, which the page itself never sees:
  // Chromium reports raw responses over CDP even when CORS hides them.
  // (The two events of one request come in either order.)
  const urls = new Map();
  const statuses = new Map();
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  cdp.on('Network.requestWillBeSent', (e) => urls.set(e.requestId, `${e.request.method} ${e.request.url}`));
  cdp.on('Network.responseReceivedExtraInfo', (e) => statuses.set(e.requestId, e.statusCode));
  const apiAnswers = () => [...statuses]
    .map(([id, status]) => [urls.get(id) ?? '', status])
    .filter(([req]) => req.includes(`${APP}/api/`))
    .map(([req, status]) => `${req.replace(APP, '')} ${status}`);
  // Same site (127.0.0.1, another port) and cross site (localhost).
  for (const origin of [PAGES, `http://localhost:${ports.pages}`]) {
    urls.clear();
    statuses.clear();
    await page.goto(`${origin}/attacker`);
    const outcome = await page.evaluate(async ({ app, target }) => {
      const out = {};
      try {
        const r = await fetch(`${app}/api/session`);
        out.readSession = `read ${r.status}: ${await r.text()}`;
      } catch {
        out.readSession = 'blocked by the browser';
      }
      try {
        // A "simple" request needs no preflight, so it does reach the proxy.
        const r = await fetch(`${app}/api/fetch`, {
          method: 'POST',
          mode: 'no-cors',
          headers: { 'content-type': 'text/plain' },
          body: JSON.stringify({ url: target }),
        });
        // Opaque at best; the proxy's Cross-Origin-Resource-Policy makes
        // the browser drop even that.
        out.blindFetch = r.type === 'opaque' ? 'nothing readable' : `read ${r.status}`;
      } catch {
        out.blindFetch = 'nothing readable';
      }
      try {
        const r = await fetch(`${app}/api/fetch`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-hearth-token': 'guessed' },
          body: JSON.stringify({ url: target }),
        });
        out.withToken = `read ${r.status}`;
      } catch {
        out.withToken = 'blocked by the browser';
      }
      return out;
    }, { app: APP, target: `${PAGES}/stolen` });
    expect(outcome).toEqual({
      readSession: 'blocked by the browser',
      blindFetch: 'nothing readable',
      withToken: 'blocked by the browser',
    });
    // What reached the proxy was refused there, not only hidden by CORS.
    await expect.poll(apiAnswers).toContain('GET /api/session 403');
    expect(apiAnswers()).toContain('POST /api/fetch 403');
    expect(apiAnswers().filter((a) => !a.endsWith(' 403'))).toEqual([]);
  }
  expect(seen.pages.filter((u) => u === '/stolen')).toEqual([]);
});

/// Headers the app's own browser sends to the proxy.
const appHeaders = () => ({
  host: `127.0.0.1:${ports.app}`,
  origin: APP,
  'sec-fetch-site': 'same-origin',
  'content-type': 'application/json',
});

test('forged requests are refused with 403 and never open CORS', async () => {
  const body = JSON.stringify({ url: `${PAGES}/forged` });
  // (what is wrong, request, expected error code)
  const cases = [
    ['no token', { method: 'POST', path: '/api/fetch', headers: appHeaders(), body }, 'missing_token'],
    ['a guessed token', { method: 'POST', path: '/api/fetch', headers: { ...appHeaders(), 'x-hearth-token': 'x'.repeat(43) }, body }, 'bad_token'],
    ['a foreign Origin', { method: 'POST', path: '/api/fetch', headers: { ...appHeaders(), origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }, body }, 'forbidden_fetch_site'],
    ['a foreign Origin claiming same-origin', { method: 'POST', path: '/api/fetch', headers: { ...appHeaders(), origin: 'https://evil.example' }, body }, 'forbidden_origin'],
    ['a DNS-rebound Host', { path: '/api/session', headers: { ...appHeaders(), host: `rebind.evil.example:${ports.app}` } }, 'forbidden_host'],
    ['no Sec-Fetch-Site (not a browser on the app)', { path: '/api/session', headers: { host: `127.0.0.1:${ports.app}` } }, 'forbidden_fetch_site'],
    ['a CORS preflight', { method: 'OPTIONS', path: '/api/fetch', headers: { ...appHeaders(), origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-hearth-token' } }, 'preflight_refused'],
  ];
  const got = [];
  for (const [what, request] of cases) {
    const r = await rawRequest(ports.app, request);
    got.push([what, r.status, r.json?.error?.code, r.headers['access-control-allow-origin'] ?? null]);
  }
  expect(got).toEqual(cases.map(([what, , code]) => [what, 403, code, null]));
  expect(seen.pages.filter((u) => u === '/forged')).toEqual([]);
});

test('a local program pretending to be the app gets no key; the app has it from its launch link', async ({ page }) => {
  // Everything a browser on the app would send, forged: still no key.
  const session = await rawRequest(ports.app, { path: '/api/session', headers: appHeaders() });
  expect([session.status, session.json?.error?.code]).toEqual([403, 'missing_token']);
  expect(session.text).not.toContain(e2eKey());
  // Without it, nothing of the API answers, the stdio bridge included.
  for (const [method, path] of [['GET', '/api/mcp/stdio'], ['POST', '/mcp/stdio/files'], ['GET', '/api/search/backend']]) {
    const r = await rawRequest(ports.app, { method, path, headers: appHeaders(), body: '{}' });
    expect([method, path, r.status, r.json?.error?.code]).toEqual([method, path, 403, 'missing_token']);
  }
  // The app itself, opened from the launch link, keeps the key and takes
  // it out of the address bar and the history.
  await openApp(page, 'chat');
  expect(page.url()).toBe(`${APP}/#/chat`);
  // No history entry holds the key: one step back is the blank page the
  // browser started on, and forward is the app without it.
  await page.goBack();
  expect(page.url()).toBe('about:blank');
  await page.goForward();
  expect(page.url()).toBe(`${APP}/#/chat`);
  await page.waitForSelector('body[data-ready]');
  expect(await page.evaluate(() => localStorage.getItem('hearth.server-key'))).toBe(e2eKey());
  // …and the proxy answers it (the status comes from GET /api/search/backend).
  await page.getByRole('link', { name: 'Settings' }).click();
  await expect(page.getByTestId('search-backend-status')).toHaveText(/search backend is set up|^Using /);
});

test('a page sending the browser to the app with another key cannot replace the working one', async ({ page }) => {
  await openApp(page, 'chat');
  const stored = () => page.evaluate(() => localStorage.getItem('hearth.server-key'));
  expect(await stored()).toBe(e2eKey());
  // Any page can link to the app with a fragment of its choosing.
  const wrong = 'A'.repeat(43);
  const visits = [
    `${APP}/#token=${wrong}`,
    `${APP}/#/settings?token=${wrong}`,
    `${APP}/#token=not-a-key`,
    `${APP}/#token=${e2eKey()}&token=${wrong}`,
  ];
  for (const url of visits) {
    // A fresh load, as from a link on another page.
    await page.goto('about:blank');
    await page.goto(url);
    await page.waitForSelector('body[data-ready]');
    // The address no longer holds it…
    expect(page.url(), url).not.toContain('token=');
    // …and the key this browser had still works: the proxy answers.
    await page.waitForTimeout(300);
    expect(await stored(), url).toBe(e2eKey());
  }
  await page.getByRole('link', { name: 'Settings' }).click();
  await expect(page.getByTestId('search-backend-status')).toHaveText(/search backend is set up|^Using /);

  // A key that works does replace one that no longer does (a new
  // `hearth serve` config, say): only failing keys are turned away.
  await page.evaluate(() => localStorage.setItem('hearth.server-key', 'B'.repeat(43)));
  await page.goto('about:blank');
  await page.goto(`${APP}/#token=${e2eKey()}`);
  await page.waitForSelector('body[data-ready]');
  await expect.poll(stored).toBe(e2eKey());
});

test('the app itself cannot be talked into fetching private addresses', async ({ page }) => {
  await openApp(page, 'skills');
  const toggle = page.getByRole('switch', { name: 'Enable Web fetch' });
  await toggle.check();
  await expect(toggle).toBeChecked();
  await page.getByRole('link', { name: 'Chat' }).click();

  // (url asked for, what the card must say)
  const cases = [
    ['http://169.254.169.254/latest/meta-data/', /cloud metadata/],
    [`http://127.0.0.1:${secretPort}/secret`, /not on the public internet: .*loopback/],
    [`http://0x7f000001:${secretPort}/secret`, /not on the public internet: .*loopback/],
    [`http://[::ffff:127.0.0.1]:${secretPort}/secret`, /not on the public internet/],
    [`http://localhost:${secretPort}/secret`, /not on the public internet: .*loopback/],
    [`${APP}/api/session`, /not on the public internet: .*loopback/],
    [`${PAGES}/to-secret`, /not on the public internet: .*loopback/],
  ];
  let before;
  for (const [i, [url, message]] of cases.entries()) {
    await runCommand(page, `/web_fetch ${url}`);
    if (i === 0) {
      // Asked once, then allowed for the rest: the guard is the proxy's, not
      // the approval's.
      const dialog = page.getByRole('dialog', { name: 'Web fetch' });
      await dialog.getByRole('button', { name: 'Always allow this skill' }).click();
    }
    const card = page
      .locator('.result-card[data-skill="web_fetch"]')
      .filter({ has: page.locator('.card-input', { hasText: url }) });
    await expect(card, url).toHaveAttribute('data-status', 'failed');
    await expect(card.locator('.card-output'), url).toHaveText(message);
    if (i === 0) before = await appData(page);
  }
  // The refusals changed nothing but the log and the usage counter.
  expectOnlyRunsAdded(before, await appData(page), { web_fetch: cases.length - 1 });
  await saveScreenshot(page, 'web-fetch-refused');
  // The redirect was followed as far as the allowed page server, no further.
  expect(seen.pages.filter((u) => u === '/to-secret')).toEqual(['/to-secret']);
  expect(seen.secret).toEqual([]);
});
