// Runs an attack corpus against the sandbox, one test per attack, on one
// page shared by the whole file, then proves nothing escaped.
import { test, expect } from '@playwright/test';
import { openApp, saveScreenshot } from './app.mjs';
import { appData, runSkill, sandboxFrame, startCanary } from './sandbox.mjs';
import { startStatic } from './static.mjs';
import { expectOnlyRunsAdded } from './stores.mjs';

/// Planted in the app's storage; no attack may ever print it.
export const SECRET = 'hearth-secret-4f1c9a7e52';

/// `host`: 'serve' runs against the suite's `hearth serve`; 'static' serves
/// the same build with a plain static server that sends no headers.
/// `underWorker`: first let the service worker take over and reload, as on
/// any later visit (on a static host, that makes the page cross-origin
/// isolated); otherwise the attacks meet a first visit.
export function attackSuite({ language, skill, attacks, sanity, screenshot, host = 'serve', underWorker = false }) {
  test.describe.configure({ mode: 'default' });
  let page;
  let canary;
  let errors;
  let before;
  let server = null;
  const outputs = [];
  // Calls made since `before`, per skill.
  const runs = {};
  const ran = (s) => { runs[s] = (runs[s] ?? 0) + 1; };

  test.beforeAll(async ({ browser, baseURL }) => {
    canary = await startCanary();
    if (host === 'static') server = await startStatic();
    page = await browser.newPage({ baseURL: server ? server.url : baseURL });
    errors = await openApp(page);
    if (underWorker) {
      await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 30_000 });
      await page.reload();
      await page.waitForSelector('body[data-ready]');
      expect(await page.evaluate(() => self.crossOriginIsolated)).toBe(true);
    }
    await page.evaluate((secret) => {
      localStorage.setItem('hearth-secret', secret);
      document.cookie = `hearth_secret=${secret}; path=/; SameSite=Strict`;
    }, SECRET);
    // A record holding the secret in the app's IndexedDB (the activity log).
    const seeded = await runSkill(page, 'run_javascript', { code: 'input.length', input: SECRET });
    expect(seeded.status).toBe('completed');
    before = await appData(page);
    expect(JSON.stringify(before.activity)).toContain(SECRET);
  });

  test.afterAll(async () => {
    await page?.close();
    await canary?.close();
    await server?.stop();
  });

  for (const attack of attacks) {
    test(`${language} attack: ${attack.name}`, async ({ baseURL }) => {
      test.setTimeout(180_000);
      if (server) baseURL = server.url;
      const code = attack.code
        .replaceAll('CANARY_PORT', String(canary.port))
        .replaceAll('CANARY', canary.url)
        .replaceAll('APP', baseURL);
      const args = { code };
      if (attack.timeout_ms) args.timeout_ms = attack.timeout_ms;
      const result = await runSkill(page, skill, args, { timeout: 150_000 });
      ran(skill);
      outputs.push(result.output);
      expect(result.status, result.output).toBe('failed');
      expect(result.output).toMatch(attack.expect);
      expect(result.output).not.toContain('FORGED');
      if (attack.forged) {
        const frame = await sandboxFrame(page);
        const dropped = await frame.evaluate(() => Number(document.documentElement.dataset.dropped || 0));
        expect(dropped).toBeGreaterThan(0);
      }
      // The app still works: a plain run in each language succeeds.
      for (const [s, args, want] of sanity) {
        const ok = await runSkill(page, s, args, { timeout: 150_000 });
        expect(ok.status, `${s} after "${attack.name}": ${ok.output}`).toBe('completed');
        expect(ok.output).toContain(want);
        ran(s);
      }
    });
  }

  test(`${language} attacks: nothing reached the network, the app's data is intact and unread`, async () => {
    expect(canary.hits()).toEqual([]);
    for (const output of outputs) expect(output).not.toContain(SECRET);
    // Every store as before, exactly, but for the runs' own records.
    expectOnlyRunsAdded(before, await appData(page), runs);
    expect(await page.evaluate(() => localStorage.getItem('hearth-secret'))).toBe(SECRET);
    expect(await page.evaluate(() => document.cookie)).toContain(SECRET);
    await saveScreenshot(page, screenshot);
    expect(errors).toEqual([]);
  });
}
