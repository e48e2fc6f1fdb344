// A link in a reply is not looked up in DNS before anyone clicks it: the
// lookup alone would tell a name server (and whoever watches it) what the
// page shows. `hearth serve` sends `X-DNS-Prefetch-Control: off` and the
// page says it again in a meta tag. Proven with the browser's own network
// log: no lookup of the links' hosts until one is clicked, and then one.
import { test, expect, chromium } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openApp } from '../support/app.mjs';
import { chromiumLaunchOptions } from '../support/env.mjs';
import { say, startFakeModel, useProvider } from '../support/model.mjs';

/// Every host name the network log saw a DNS lookup start for.
function lookedUp(logFile) {
  const log = JSON.parse(fs.readFileSync(logFile, 'utf8').replace(/,\s*\]\s*\}\s*$/, ']}').replace(/,\s*$/, ']}'));
  const types = Object.fromEntries(Object.entries(log.constants.logEventTypes).map(([k, v]) => [v, k]));
  const hosts = new Set();
  for (const e of log.events) {
    if (!String(types[e.type] || '').startsWith('HOST_RESOLVER')) continue;
    const p = e.params || {};
    for (const v of [p.host, p.hostname, p.host_name, p.url]) {
      if (typeof v === 'string') hosts.add(v.replace(/^[a-z]+:\/\//, '').replace(/[:/].*$/, ''));
    }
  }
  return hosts;
}

test('links in a reply are not looked up before a click', async ({ baseURL }) => {
  test.setTimeout(120_000);
  const model = await startFakeModel('links.json');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-netlog-'));
  const logFile = path.join(dir, 'netlog.json');
  const options = chromiumLaunchOptions();
  const browser = await chromium.launch({
    ...options,
    args: [...options.args, `--log-net-log=${logFile}`, '--net-log-capture-mode=Everything'],
  });
  try {
    const context = await browser.newContext({ baseURL });
    const page = await context.newPage();
    const errors = await openApp(page, 'chat');
    // The page says it too, for hosts that send no header.
    await expect(page.locator('meta[http-equiv="x-dns-prefetch-control"]')).toHaveAttribute('content', 'off');
    await useProvider(page, model.base);
    await say(page, 'links please');
    const reply = page.locator('.message.assistant').last();
    await expect(reply.locator('a[href^="http://prefetch-canary-one."]')).toBeVisible();
    await expect(reply.locator('a[href^="http://prefetch-canary-two."]')).toBeVisible();
    // Time for a prefetch to have happened, if one were going to.
    await page.waitForTimeout(2_000);
    // Then the person clicks the first link: that one is looked up.
    const opened = context.waitForEvent('page');
    await reply.locator('a[href^="http://prefetch-canary-one."]').click();
    const tab = await opened;
    await tab.waitForLoadState('domcontentloaded').catch(() => {});
    await page.waitForTimeout(1_000);
    expect(errors).toEqual([]);
    await context.close();
  } finally {
    await browser.close();
    await model.stop();
  }
  const hosts = lookedUp(logFile);
  // The log works: the clicked link's host was looked up…
  expect([...hosts]).toContain('prefetch-canary-one.hearth-test.example');
  // …and the one nobody clicked never was.
  expect([...hosts]).not.toContain('prefetch-canary-two.hearth-test.example');
});
