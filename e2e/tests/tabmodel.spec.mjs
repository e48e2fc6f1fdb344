// A model in the tab, for real: SmolLM2-135M-Instruct (Q4_1, 98 MB, which
// `cargo xtask test` installs into .test-fixtures/) run by wllama in the
// app's Worker. Added from a file, it answers streamed with a tokens/s
// figure, stops at once, is still listed after a reload, answers with the
// network off and the server stopped, and frees its storage when deleted.
// Then what can go wrong when adding one: not a model, a link whose host
// forbids CORS, a download cut short, too little space. Last, the
// worker's own choice of build and threads, and the 32-bit build (what
// browsers without JSPI or 64-bit memory run) answering for real.
//
// The machine these run on may be slow and busy: timeouts are generous
// and answers short. Speeds are benchmarks (`cargo xtask bench`), never
// asserted here.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { openApp, saveScreenshot } from '../support/app.mjs';
import { repoRoot } from '../support/env.mjs';
import { say } from '../support/model.mjs';
import { startServe } from '../support/serve.mjs';

test.describe.configure({ mode: 'serial' });

const MODEL =
  process.env.HEARTH_TEST_MODEL || path.join(repoRoot, '.test-fixtures', 'models', 'SmolLM2-135M-Instruct.Q4_1.gguf');

const lastReply = (page) => page.locator('.message.assistant').last();

/// Opens the app from `server`'s launch link (the key to its API), goes to
/// `place` and waits until the service worker controls the page.
async function openControlled(page, server, place) {
  const errors = await openApp(page, place, { base: server.url, key: server.key });
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 60_000 });
  return errors;
}

/// The names in the private file system's models folder.
function storedFiles(page) {
  return page.evaluate(async () => {
    const root = await navigator.storage.getDirectory();
    let dir;
    try {
      dir = await root.getDirectoryHandle('models');
    } catch {
      return [];
    }
    const names = [];
    for await (const name of dir.keys()) names.push(name);
    return names.sort();
  });
}

/// The bytes the private file system's models folder holds.
function storedBytes(page) {
  return page.evaluate(async () => {
    const root = await navigator.storage.getDirectory();
    let dir;
    try {
      dir = await root.getDirectoryHandle('models');
    } catch {
      return 0;
    }
    let total = 0;
    for await (const handle of dir.values()) total += (await handle.getFile()).size;
    return total;
  });
}

async function usage(page) {
  return page.evaluate(async () => (await navigator.storage.estimate()).usage);
}

/// Chooses "In this tab" in the provider settings; returns the panel.
async function chooseInTab(page) {
  await page.getByRole('link', { name: 'Settings' }).click();
  const panel = page.locator('.provider-panel');
  await panel.getByLabel('Provider').selectOption('in-tab');
  return panel;
}

/// Records, in the page, whether the model's load progress was shown and
/// how many different lengths the reply's text had while it streamed.
function watchReply(page) {
  return page.evaluate(() => {
    window.__tabWatch = { loading: false, lengths: new Set() };
    const seen = () => {
      if (document.querySelector('[data-testid="model-loading"]')) window.__tabWatch.loading = true;
      const replies = document.querySelectorAll('.message.assistant .message-text');
      const last = replies[replies.length - 1];
      if (last) window.__tabWatch.lengths.add(last.textContent.length);
    };
    window.__tabWatchObserver?.disconnect();
    window.__tabWatchObserver = new MutationObserver(seen);
    window.__tabWatchObserver.observe(document.body, { subtree: true, childList: true, characterData: true });
  });
}

async function watched(page) {
  return page.evaluate(() => ({ loading: window.__tabWatch.loading, lengths: window.__tabWatch.lengths.size }));
}

test('a model in the tab: added from a file, answers with tokens/s, stops, survives a reload, answers offline with the server stopped, and is deleted', async ({
  page,
  context,
}) => {
  test.setTimeout(1_200_000);
  expect(fs.existsSync(MODEL), `${MODEL} is missing: cargo xtask test installs it`).toBe(true);
  const server = await startServe();
  let stopped = false;
  try {
    const errors = await openControlled(page, server, 'settings');
    expect(await page.evaluate(() => self.crossOriginIsolated)).toBe(true);

    // Add the model from a file; the list reads its header.
    const panel = await chooseInTab(page);
    await expect(panel.getByTestId('tab-models-empty')).toBeVisible();
    await panel.getByLabel('Model file', { exact: true }).setInputFiles(MODEL);
    const item = panel.locator('.tab-model');
    await expect(item).toHaveCount(1, { timeout: 180_000 });
    await expect(item.locator('.tab-model-name')).toHaveText('Smollm2 135M 8k Lc100K Mix1 Ep2');
    await expect(item.locator('.tab-model-facts')).toHaveText('98.4 MB · Q4_1 · 8,192 token context · llama');
    // Its ChatML template has no tools: it only chats, and says so.
    await expect(item.locator('.tab-model-tools')).toHaveAttribute('data-tools', 'off');
    await expect(item.getByRole('radio')).toBeChecked();
    const files = await storedFiles(page);
    expect(files).toHaveLength(2);
    expect(files.filter((f) => f.endsWith('.gguf'))).toHaveLength(1);
    expect(await storedBytes(page)).toBeGreaterThan(98_362_432);

    await panel.getByLabel('Longest answer in tokens').fill('160');
    await panel.getByRole('button', { name: 'Save' }).click();
    await expect(panel.locator('.notice').last()).toContainText('Saved. The assistant now uses In this tab with Smollm2');
    await expect(panel.locator('.muted').first()).toContainText('In use: In this tab · Smollm2');
    await panel.evaluate((el) => el.scrollIntoView({ block: 'start' }));
    await saveScreenshot(page, 'tabmodel-settings');

    // Ask: the runtime and the model load with progress, then the answer
    // streams with a tokens/s figure.
    await page.getByRole('link', { name: 'Chat' }).click();
    await expect(page.getByTestId('tools-off')).toBeVisible();
    await watchReply(page);
    await say(page, 'What is the capital of France?');
    // A picture of the load's progress while it shows (that it showed at
    // all is asserted below, from the watch).
    const loading = page.getByTestId('model-loading');
    if (await loading.waitFor({ timeout: 60_000 }).then(() => true, () => false)) {
      await saveScreenshot(page, 'tabmodel-loading');
    }
    await expect(lastReply(page)).toHaveAttribute('data-status', 'complete', { timeout: 600_000 });
    const answer = (await lastReply(page).locator('.message-text').textContent()).trim();
    expect(answer.length).toBeGreaterThan(0);
    await expect(lastReply(page).getByTestId('speed')).toHaveText(/^\d+(\.\d)? tokens\/s$/);
    const first = await watched(page);
    expect(first.loading, 'the load progress was shown').toBe(true);
    expect(first.lengths, 'the text arrived in pieces').toBeGreaterThan(2);
    await saveScreenshot(page, 'tabmodel-chat');

    // Stop mid-answer: it ends at once and nothing more arrives.
    await say(page, 'Write a long story about a dragon who learns to bake bread.');
    const text = lastReply(page).locator('.message-text');
    await expect(text).not.toBeEmpty({ timeout: 300_000 });
    await page.getByRole('button', { name: 'Stop' }).click();
    await expect(lastReply(page)).toHaveAttribute('data-status', 'cancelled', { timeout: 5_000 });
    await expect(lastReply(page).locator('.stopped')).toHaveText('Stopped.');
    const kept = await text.textContent();
    await page.waitForTimeout(3_000);
    expect(await text.textContent()).toBe(kept);
    await expect(page.getByRole('button', { name: 'Send' })).toBeEnabled();

    // After a reload the model is still listed.
    await page.reload();
    await page.waitForSelector('body[data-ready]');
    await page.getByRole('link', { name: 'Settings' }).click();
    await expect(page.locator('.provider-panel .tab-model')).toHaveCount(1, { timeout: 30_000 });
    await expect(page.locator('.provider-panel .tab-model-facts')).toContainText('Q4_1');

    // Offline, with the server stopped, it still answers.
    await context.setOffline(true);
    await server.stop();
    stopped = true;
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
    await page.reload();
    await page.waitForSelector('body[data-ready]');
    await page.getByRole('link', { name: 'Chat' }).click();
    await page.getByRole('button', { name: 'New chat' }).click();
    await say(page, 'Name one color.');
    await expect(lastReply(page)).toHaveAttribute('data-status', 'complete', { timeout: 600_000 });
    expect((await lastReply(page).locator('.message-text').textContent()).trim().length).toBeGreaterThan(0);
    await expect(lastReply(page).getByTestId('speed')).toBeVisible();
    await saveScreenshot(page, 'tabmodel-offline');

    // Delete it: asked first, then its storage is freed.
    const before = await usage(page);
    await page.getByRole('link', { name: 'Settings' }).click();
    const list = page.locator('.provider-panel .tab-model');
    await list.getByRole('button', { name: /^Delete / }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete model' }).click();
    await expect(page.locator('.provider-panel .tab-model')).toHaveCount(0);
    await expect(page.getByTestId('tab-models-empty')).toBeVisible();
    await expect(page.locator('.provider-panel .notice').last()).toContainText('freed 98.4 MB');
    expect(await storedFiles(page)).toEqual([]);
    const after = await usage(page);
    expect(before - after, `usage went from ${before} to ${after}`).toBeGreaterThan(90_000_000);
    expect(errors).toEqual([]);
  } finally {
    await context.setOffline(false);
    if (!stopped) await server.stop();
  }
});

/// A GGUF header with no tensors, padded to `size` bytes: a file the list
/// reads like any model (it is never run).
function tinyGguf(size) {
  const parts = [];
  const u32 = (n) => { const b = Buffer.alloc(4); b.writeUInt32LE(n); return b; };
  const u64 = (n) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(n)); return b; };
  const str = (s) => Buffer.concat([u64(Buffer.byteLength(s)), Buffer.from(s)]);
  parts.push(Buffer.from('GGUF'), u32(3), u64(0), u64(4));
  parts.push(str('general.architecture'), u32(8), str('qwen2'));
  parts.push(str('general.name'), u32(8), str('Tiny Test Model'));
  parts.push(str('general.file_type'), u32(4), u32(15));
  parts.push(str('qwen2.context_length'), u32(4), u32(32768));
  const header = Buffer.concat(parts);
  return Buffer.concat([header, Buffer.alloc(Math.max(0, size - header.length))]);
}

/// A file server on 127.0.0.1 for downloads: `/model.gguf` with CORS,
/// `/nocors.gguf` without, `/cut.gguf` that stops halfway.
async function startFiles(body) {
  const server = http.createServer((req, res) => {
    const send = (headers, bytes, end = true) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(body.length), ...headers });
      if (end) res.end(bytes);
      else res.write(bytes, () => setTimeout(() => res.destroy(), 200));
    };
    if (req.url === '/model.gguf') send({ 'access-control-allow-origin': '*' }, body);
    else if (req.url === '/nocors.gguf') send({}, body);
    else if (req.url === '/cut.gguf') send({ 'access-control-allow-origin': '*' }, body.subarray(0, body.length / 2), false);
    else {
      res.writeHead(404, { 'access-control-allow-origin': '*' });
      res.end('no');
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
}

test('adding a model: a file that is no model, a host without CORS, a cut download and too little space keep nothing; a good link downloads with progress', async ({
  page,
}, testInfo) => {
  test.setTimeout(300_000);
  const body = tinyGguf(24 * 1024 * 1024);
  const files = await startFiles(body);
  const notModel = testInfo.outputPath('notes.gguf');
  fs.writeFileSync(notModel, 'these are my notes, not a model\n'.repeat(100));
  try {
    const errors = await openApp(page, 'settings');
    const panel = await chooseInTab(page);
    const error = panel.getByTestId('tab-model-error');

    await panel.getByLabel('Model file', { exact: true }).setInputFiles(notModel);
    await expect(error).toHaveText('This file is not a model Hearth can run: this is not a GGUF model file (it does not start with "GGUF").');
    expect(await storedFiles(page)).toEqual([]);

    const link = panel.getByLabel('Link to a model file');
    await link.fill(`${files.url}/nocors.gguf`);
    await panel.getByRole('button', { name: 'Download' }).click();
    await expect(error).toContainText('does not let other sites download its files (CORS)');
    await link.fill(`${files.url}/cut.gguf`);
    await panel.getByRole('button', { name: 'Download' }).click();
    await expect(error).toContainText('The download stopped after');
    await expect(error).toContainText('nothing was kept');
    await expect(panel.locator('.tab-model')).toHaveCount(0);
    expect(await storedFiles(page)).toEqual([]);

    await link.fill(`${files.url}/model.gguf`);
    await panel.getByRole('button', { name: 'Download' }).click();
    await expect(panel.locator('.tab-model')).toHaveCount(1, { timeout: 120_000 });
    await expect(panel.locator('.tab-model-name')).toHaveText('Tiny Test Model');
    await expect(panel.locator('.tab-model-facts')).toHaveText('25.2 MB · Q4_K_M · 32,768 token context · qwen2');
    expect(await storedFiles(page)).toHaveLength(2);

    // Saved as the provider, the model is still not in a backup, and the
    // backup's preview says so.
    await panel.getByRole('button', { name: 'Save' }).click();
    await expect(panel.locator('.notice').last()).toContainText('Saved.');
    await expect(page.getByTestId('backup-models-note')).toContainText('not included');
    const downloading = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download backup' }).click();
    const backupFile = testInfo.outputPath('backup.zip');
    await (await downloading).saveAs(backupFile);
    const backup = fs.readFileSync(backupFile);
    expect(backup.length).toBeLessThan(1_000_000);
    await page.getByLabel('Backup file').setInputFiles(backupFile);
    const preview = page.getByRole('dialog');
    await expect(preview.getByTestId('restore-models-note')).toContainText('never part of a backup');
    await preview.getByRole('button', { name: 'Cancel' }).click();
    await expect(page.getByRole('dialog')).toHaveCount(0);

    // Too little space: the check runs before anything is written.
    await page.evaluate(() => {
      const real = navigator.storage.estimate.bind(navigator.storage);
      navigator.storage.estimate = async () => {
        const e = await real();
        return { ...e, quota: e.usage + 10 * 1024 * 1024 };
      };
    });
    await link.fill(`${files.url}/model.gguf`);
    await panel.getByRole('button', { name: 'Download' }).click();
    await expect(error).toContainText('Not enough storage: the model needs 25.2 MB');
    expect(await storedFiles(page)).toHaveLength(2);
    await saveScreenshot(page, 'tabmodel-add-errors');

    // Deleting asks first; Cancel keeps it.
    await panel.getByRole('button', { name: 'Delete Tiny Test Model' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Cancel' }).click();
    await expect(panel.locator('.tab-model')).toHaveCount(1);
    await panel.getByRole('button', { name: 'Delete Tiny Test Model' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete model' }).click();
    await expect(panel.locator('.tab-model')).toHaveCount(0);
    expect(await storedFiles(page)).toEqual([]);
    expect(errors).toEqual([]);
  } finally {
    await files.close();
  }
});

test('the worker picks the 64-bit build and half the cores here, and the 32-bit build (for browsers without JSPI or 64-bit memory) answers too', async ({
  page,
}) => {
  test.setTimeout(900_000);
  const server = await startServe();
  try {
    const errors = await openControlled(page, server, 'settings');
    const panel = await chooseInTab(page);
    await panel.getByLabel('Model file', { exact: true }).setInputFiles(MODEL);
    const item = panel.locator('.tab-model');
    await expect(item).toHaveCount(1, { timeout: 180_000 });
    const model = await item.getAttribute('data-model');

    // The app's worker, driven as the assistant drives it.
    const runs = await page.evaluate(async (model) => {
      const worker = new Worker('/tabmodel/worker.js', { type: 'module' });
      let next = 1;
      const run = (message) =>
        new Promise((resolve) => {
          const id = next++;
          const out = { loaded: null, lines: [] };
          worker.addEventListener('message', function listen(e) {
            const m = e.data;
            if (m.id !== id) return;
            if (m.type === 'loaded') out.loaded = m;
            if (m.type === 'line') out.lines.push(JSON.parse(m.line));
            if (m.type === 'done') {
              worker.removeEventListener('message', listen);
              resolve(out);
            }
          });
          worker.postMessage({ ...message, id });
        });
      const body = {
        messages: [{ role: 'user', content: 'Name one color.' }],
        max_tokens: 16,
        temperature: 0,
        timings_per_token: true,
        stream: true,
      };
      const own = await run({ type: 'load', model, context: 1024 });
      const wasm32 = await run({ type: 'chat', model, context: 1024, build: 'wasm32', body });
      worker.terminate();
      return { own, wasm32, cores: navigator.hardwareConcurrency };
    }, model);

    expect(runs.own.lines, JSON.stringify(runs.own.lines)).toEqual([]);
    expect(runs.own.loaded.build).toBe('wasm64');
    expect(runs.own.loaded.threads).toBe(Math.max(1, Math.min(8, Math.floor(runs.cores / 2))));
    const errorsOf = runs.wasm32.lines.filter((l) => l.error);
    expect(errorsOf, JSON.stringify(errorsOf)).toEqual([]);
    expect(runs.wasm32.loaded.build).toBe('wasm32');
    const text = runs.wasm32.lines.map((c) => c.choices?.[0]?.delta?.content || '').join('');
    expect(text.trim().length).toBeGreaterThan(0);
    expect(runs.wasm32.lines.at(-1).timings.predicted_n).toBeGreaterThan(0);

    await page.getByRole('link', { name: 'Settings' }).click();
    await page.locator('.provider-panel .tab-model').getByRole('button', { name: /^Delete / }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete model' }).click();
    await expect(page.locator('.provider-panel .tab-model')).toHaveCount(0);
    expect(errors).toEqual([]);
  } finally {
    await server.stop();
  }
});
