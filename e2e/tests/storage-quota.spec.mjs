// When browser storage is full, a skill says so and nothing already stored
// is lost. The quota is made tiny for real through the DevTools protocol.
// Chromium honours that override on on-disk profiles and reads the quota
// when a database connection opens, so the note to keep is written in one
// browser session and the quota is lowered before the app opens its
// database in the next.
import { test, expect, chromium } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromiumLaunchOptions } from '../support/env.mjs';
import { runCommand } from '../support/app.mjs';

async function session(profile, baseURL, f, beforeLoad = async () => {}) {
  const context = await chromium.launchPersistentContext(profile, chromiumLaunchOptions());
  try {
    const page = await context.newPage();
    await beforeLoad(page, context);
    await page.goto(`${baseURL}/#/chat`);
    await page.waitForSelector('body[data-ready]');
    await f(page, context);
  } finally {
    await context.close();
  }
}

test('a write over the quota fails clearly and loses nothing', async ({ baseURL }) => {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-quota-'));
  const origin = new URL(baseURL).origin;
  try {
    await session(profile, baseURL, async (page) => {
      await runCommand(page, '/notes {"action":"create","title":"Keep me","body":"safe"}');
      await expect(page.locator('.result-card[data-status="completed"]')).toHaveCount(1);
    });

    let cdp;
    const lowerQuota = async (page, context) => {
      cdp = await context.newCDPSession(page);
      await cdp.send('Storage.overrideQuotaForOrigin', { origin, quotaSize: 1000 });
    };
    await session(profile, baseURL, async (page) => {
      await runCommand(page, `/notes ${JSON.stringify({ action: 'create', title: 'Too big', body: 'x'.repeat(190_000) })}`);
      const last = page.locator('.result-card').last();
      await expect(last).toHaveAttribute('data-status', 'failed');
      await expect(last.locator('.card-output')).toContainText('storage is full; nothing was changed');
      await page.getByRole('link', { name: 'Notes' }).click();
      await expect(page.getByRole('option')).toHaveCount(1);
      await cdp.send('Storage.overrideQuotaForOrigin', { origin });
    }, lowerQuota);

    await session(profile, baseURL, async (page) => {
      await page.getByRole('link', { name: 'Notes' }).click();
      await expect(page.getByRole('option')).toHaveCount(1);
      await expect(page.getByRole('option', { name: /Keep me/ })).toBeVisible();
    });
  } finally {
    fs.rmSync(profile, { recursive: true, force: true });
  }
});
