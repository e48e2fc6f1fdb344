// Another page cannot frame Hearth, whoever serves it: `hearth serve` says
// so in its headers; on a static host, which sends none, the service worker
// adds `frame-ancestors 'none'` to the pages it serves, and on the first
// visit (before the worker) the app itself sees it is framed and does not
// start. A framed app could have its buttons covered by the framing page's
// own content and clicked through.
import { test, expect } from '@playwright/test';
import { freePort } from '../support/mcp.mjs';
import { close, listen } from '../support/servers.mjs';
import { startStatic } from '../support/static.mjs';

test.describe.configure({ mode: 'serial' });

let host;
let attacker;
let attackerUrl;
test.beforeAll(async () => {
  host = await startStatic();
  // Another port of 127.0.0.1: another origin, the same site, so the
  // browser's partitioning of frames does not come into it.
  const port = await freePort();
  attackerUrl = `http://127.0.0.1:${port}`;
  attacker = await listen(port, (req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><title>Win a prize</title><h1>Click the button!</h1>
      <iframe id="victim" src="${host.url}/#/settings" style="width:900px;height:600px"></iframe>`);
  });
});
test.afterAll(async () => {
  await host?.stop();
  if (attacker) await close(attacker);
});

test('framed on its first visit to a static host, the app does not start', async ({ browser }) => {
  const context = await browser.newContext({ serviceWorkers: 'block' });
  const page = await context.newPage();
  await page.goto(`${attackerUrl}/`);
  const frame = page.frameLocator('#victim');
  await expect(frame.locator('[data-framed="refused"]')).toContainText('Hearth does not run inside another page.');
  await expect(frame.getByRole('link', { name: 'Open Hearth in its own tab' })).toHaveAttribute('target', '_blank');
  // Nothing of the app: no settings, no storage opened.
  await expect(frame.locator('body[data-ready]')).toHaveCount(0);
  await expect(frame.getByRole('link', { name: 'Settings' })).toHaveCount(0);
  const databases = await page.frames()[1].evaluate(() => indexedDB.databases());
  expect(databases.map((d) => d.name)).not.toContain('hearth');
  await context.close();
});

test('under the service worker, the browser refuses to frame the app at all', async ({ browser }) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  // The person's own visit installs the worker.
  await page.goto(`${host.url}/#/chat`);
  await page.waitForSelector('body[data-ready]');
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 30_000 });
  // The host sends no policy; what the worker serves has one.
  const served = await page.evaluate(async () => (await fetch('/index.html')).headers.get('content-security-policy'));
  expect(served).toContain("frame-ancestors 'none'");
  // Then another page frames it: the worker's answer carries
  // frame-ancestors 'none', and the browser shows its error page instead.
  const attack = await context.newPage();
  await attack.goto(`${attackerUrl}/`);
  const frame = attack.frames().find((f) => f !== attack.mainFrame());
  await expect.poll(() => frame.url(), { timeout: 15_000 }).toBe('chrome-error://chromewebdata/');
  await expect(attack.frameLocator('#victim').locator('body[data-ready]')).toHaveCount(0);
  // Not the script check: the app's page never loaded in the frame.
  await expect(attack.frameLocator('#victim').locator('[data-framed]')).toHaveCount(0);
  await context.close();
});
