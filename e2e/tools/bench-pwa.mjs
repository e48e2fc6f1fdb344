// Prints the PWA figures (no assertions; figures only):
// - the precache size (from the build's own list in dist/sw.js);
// - cold start over the network from `hearth serve` against warm start
//   from the service worker, with the server stopped (median of 5, time
//   from navigation to the app mounted, body[data-ready]);
// - opening a schema-v2 database with N notes (the upgrade to the current
//   schema happens on that open);
// - backup (download) and restore (preview, then replace into an emptied
//   profile) of 10,000 notes and 1,000 conversations, through Settings.
// Run after a build:  node e2e/tools/bench-pwa.mjs   (BENCH_NOTES, BENCH_CONVERSATIONS to change N)
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromiumLaunchOptions, hearthDist } from '../support/env.mjs';
import { startServe } from '../support/serve.mjs';

const NOTES = Number(process.env.BENCH_NOTES || 10_000);
const CONVERSATIONS = Number(process.env.BENCH_CONVERSATIONS || 1_000);
const RUNS = 5;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x) => `${x.toFixed(0)} ms`;
const mb = (n) => `${(n / 1e6).toFixed(2)} MB`;

async function timedOpen(page, url) {
  const t0 = performance.now();
  await page.goto(url);
  await page.waitForSelector('body[data-ready]', { timeout: 120_000 });
  return performance.now() - t0;
}

function precacheSize() {
  const sw = fs.readFileSync(path.join(hearthDist, 'sw.js'), 'utf8');
  const line = sw.split('\n').find((l) => l.startsWith('self.HEARTH_BUILD = '));
  const build = JSON.parse(line.slice('self.HEARTH_BUILD = '.length, -1));
  const sum = (fs_) => fs_.reduce((n, f) => n + f.size, 0);
  console.log(
    `precache: ${build.shell.length} shell files, ${mb(sum(build.shell))} ` +
      `(wasm ${mb(sum(build.shell.filter((f) => f.url.endsWith('.wasm'))))}); ` +
      `Python runtime (cached on first use, not precached): ${build.python.length} files, ${mb(sum(build.python))}`,
  );
}

async function starts(browser) {
  const server = await startServe();
  const cold = [];
  for (let i = 0; i < RUNS; i++) {
    // A fresh profile each time: no service worker, no HTTP cache.
    const context = await browser.newContext({ serviceWorkers: 'block' });
    const page = await context.newPage();
    cold.push(await timedOpen(page, `${server.url}/#/chat`));
    await context.close();
  }
  const context = await browser.newContext();
  const page = await context.newPage();
  await timedOpen(page, `${server.url}/#/chat`);
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 60_000 });
  await context.setOffline(true);
  await server.stop();
  const warm = [];
  for (let i = 0; i < RUNS; i++) warm.push(await timedOpen(page, `${server.url}/?run=${i}#/chat`));
  await context.close();
  console.log(
    `start (navigation → app mounted, median of ${RUNS}): cold over the network ${ms(median(cold))} ` +
      `[${cold.map((x) => x.toFixed(0)).join(', ')}]; warm from the service worker, offline, server stopped ${ms(median(warm))} ` +
      `[${warm.map((x) => x.toFixed(0)).join(', ')}]`,
  );
}

/// Puts N notes (and conversations) straight into the app's database,
/// shaped as the app writes them.
async function seed(page, notes, conversations, version) {
  return page.evaluate(
    async ({ notes, conversations, version }) => {
      const db = await new Promise((resolve, reject) => {
        const req = version ? indexedDB.open('hearth', version) : indexedDB.open('hearth');
        req.onupgradeneeded = () => {
          // Schema v2, as shipped: the v1 log plus the core stores.
          const d = req.result;
          d.createObjectStore('activity', { keyPath: 'id' }).createIndex('started_at', 'result.started_at_ms');
          for (const s of ['notes', 'tasks', 'memories']) d.createObjectStore(s, { keyPath: 'id' });
          d.createObjectStore('settings', { keyPath: 'key' });
          d.createObjectStore('usage', { keyPath: 'skill_id' });
        };
        req.onsuccess = () => resolve(req.result);
        req.onerror = () => reject(req.error);
      });
      const stores = conversations ? ['notes', 'conversations'] : ['notes'];
      const tx = db.transaction(stores, 'readwrite');
      const now = Date.now();
      const text = 'Local-first means the data lives here. '.repeat(4);
      for (let i = 0; i < notes; i++) {
        tx.objectStore('notes').put({
          id: `bench-note-${i}`,
          title: `Note ${i}`,
          body: `${text}${i}`,
          tags: ['bench'],
          created_ms: now - i,
          updated_ms: now - i,
        });
      }
      for (let c = 0; c < conversations; c++) {
        const messages = [];
        for (let m = 0; m < 6; m++) {
          messages.push({
            id: `m${m}`,
            role: m % 2 ? 'assistant' : 'user',
            content: `${text} (conversation ${c}, message ${m})`,
            created_at_ms: now - c,
            updated_at_ms: now - c,
            status: 'complete',
          });
        }
        tx.objectStore('conversations').put({
          id: `bench-conv-${c}`,
          title: `Conversation ${c}`,
          title_is_custom: false,
          created_at_ms: now - c,
          updated_at_ms: now - c,
          loaded_skills: [],
          settings: {},
          messages,
          next_seq: 6,
        });
      }
      await new Promise((resolve, reject) => {
        tx.oncomplete = resolve;
        tx.onerror = () => reject(tx.error);
      });
      const v = db.version;
      db.close();
      return v;
    },
    { notes, conversations, version },
  );
}

async function migration(browser) {
  const server = await startServe();
  try {
    const context = await browser.newContext({ serviceWorkers: 'block' });
    const page = await context.newPage();
    await page.goto(`${server.url}/healthz`);
    await seed(page, NOTES, 0, 2);
    const upgraded = await timedOpen(page, `${server.url}/#/notes`);
    const version = await page.evaluate(
      () =>
        new Promise((resolve) => {
          const r = indexedDB.open('hearth');
          r.onsuccess = () => {
            resolve(r.result.version);
            r.result.close();
          };
        }),
    );
    const again = await timedOpen(page, `${server.url}/?again#/notes`);
    console.log(
      `migration: opening a v2 database with ${NOTES.toLocaleString('en')} notes → v${version}: ${ms(upgraded)} to the app mounted ` +
        `(the same data already at v${version}: ${ms(again)})`,
    );
    await context.close();
  } finally {
    await server.stop();
  }
}

async function backupRestore(browser) {
  const server = await startServe();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-bench-'));
  try {
    const context = await browser.newContext({ serviceWorkers: 'block', acceptDownloads: true });
    const page = await context.newPage();
    await timedOpen(page, `${server.url}/#/chat`);
    await seed(page, NOTES, CONVERSATIONS, 0);
    await timedOpen(page, `${server.url}/?seeded#/settings`);
    await page.waitForFunction(
      (n) => document.querySelector('[data-testid=store-table] tr[data-store="notes"] td.num')?.textContent === n,
      NOTES.toLocaleString('en'),
      { timeout: 120_000 },
    ).catch(async (e) => {
      await page.screenshot({ path: path.join(os.tmpdir(), 'hearth-bench-failed.png') });
      throw e;
    });

    let t0 = performance.now();
    const downloading = page.waitForEvent('download', { timeout: 300_000 });
    await page.getByRole('button', { name: 'Download backup' }).click();
    const download = await Promise.race([
      downloading,
      page
        .locator('[data-testid=backup-note].error')
        .waitFor({ timeout: 300_000 })
        .then(async () => {
          throw new Error(`backup failed: ${await page.getByTestId('backup-note').textContent()}`);
        }),
    ]);
    const backupMs = performance.now() - t0;
    const file = path.join(tmp, download.suggestedFilename());
    await download.saveAs(file);
    const size = fs.statSync(file).size;

    await page.getByRole('button', { name: 'Clear all data…' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete everything' }).click();
    await page.getByText('All data was deleted.').waitFor({ timeout: 120_000 });

    t0 = performance.now();
    await page.getByLabel('Backup file').setInputFiles(file);
    const dialog = page.getByRole('dialog');
    await dialog.getByTestId('restore-table').waitFor({ timeout: 300_000 });
    const previewMs = performance.now() - t0;
    await dialog.getByRole('radio', { name: /Replace/ }).check();
    const go = dialog.getByRole('button', { name: 'Replace everything here' });
    while (!(await go.isEnabled())) await new Promise((r) => setTimeout(r, 20));
    t0 = performance.now();
    await go.click();
    await page.getByTestId('restore-done').waitFor({ timeout: 300_000 });
    const restoreMs = performance.now() - t0;
    const restored = await page.evaluate(
      () =>
        new Promise((resolve) => {
          const r = indexedDB.open('hearth');
          r.onsuccess = () => {
            const tx = r.result.transaction(['notes', 'conversations']);
            const a = tx.objectStore('notes').count();
            const b = tx.objectStore('conversations').count();
            tx.oncomplete = () => {
              resolve([a.result, b.result]);
              r.result.close();
            };
          };
        }),
    );
    console.log(
      `backup of ${NOTES.toLocaleString('en')} notes + ${CONVERSATIONS.toLocaleString('en')} conversations (6 messages each): ` +
        `${ms(backupMs)} to the download, file ${mb(size)}; restore: preview ${ms(previewMs)}, replace ${ms(restoreMs)}; ` +
        `restored ${restored[0]} notes, ${restored[1]} conversations`,
    );
    await context.close();
  } catch (e) {
    await browser.contexts()[0]?.pages()[0]?.screenshot({ path: path.join(os.tmpdir(), 'hearth-bench-failed.png') });
    throw e;
  } finally {
    await server.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

precacheSize();
const only = process.argv[2];
const browser = await chromium.launch(chromiumLaunchOptions());
try {
  if (!only || only === 'start') await starts(browser);
  if (!only || only === 'migration') await migration(browser);
  if (!only || only === 'backup') await backupRestore(browser);
} finally {
  await browser.close();
}
