// A model in the tab, for real: SmolLM2-135M-Instruct, converted by
// `cargo xtask test` (with llama.cpp's own quantize tool) to Q4_0, which
// Hearth's engine runs with its WebAssembly SIMD kernels, in the app's
// Worker. Added from a file, it answers streamed with a tokens/s figure and
// a prompt-reading step, stops at once and keeps its token counts, is
// still listed after a reload, answers with the network off and the server
// stopped, and frees its storage when deleted. Then what can go wrong when
// adding one: not a model, a link whose host forbids CORS, a download cut
// short, too little space. Then the first model in three clicks: the
// empty chat's offer, a suggested model downloaded with progress (the test
// model, served from 127.0.0.1), and the way to download it by hand when
// the host refuses. Last, a page without cross-origin isolation gets a
// clear error instead of a broken engine.
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
import { startStatic } from '../support/static.mjs';

test.describe.configure({ mode: 'serial' });

const MODEL =
  process.env.HEARTH_TEST_MODEL_Q4_0 || path.join(repoRoot, '.test-fixtures', 'models', 'SmolLM2-135M-Instruct.Q4_0.gguf');
const MODEL_NAME = path.basename(MODEL, '.gguf');
/// The size as the app writes it ("78.0 MB").
const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;
const MODEL_SIZE = fs.existsSync(MODEL) ? fs.statSync(MODEL).size : 0;

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

/// Records, in the page, whether the model's load and prompt progress were
/// shown and how many different lengths the reply's text had while it
/// streamed.
function watchReply(page) {
  return page.evaluate(() => {
    window.__tabWatch = { loading: false, reading: false, lengths: new Set() };
    const seen = () => {
      if (document.querySelector('[data-testid="model-loading"]')) window.__tabWatch.loading = true;
      if (document.querySelector('[data-testid="model-reading"]')) window.__tabWatch.reading = true;
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
  return page.evaluate(() => ({
    loading: window.__tabWatch.loading,
    reading: window.__tabWatch.reading,
    lengths: window.__tabWatch.lengths.size,
  }));
}

test('a model in the tab: added from a file, answers with tokens/s, stops with its counts, survives a reload, answers offline with the server stopped, and is deleted', async ({
  page,
  context,
}) => {
  test.setTimeout(1_200_000);
  expect(fs.existsSync(MODEL), `${MODEL} is missing: cargo xtask test converts it`).toBe(true);
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
    // Listed by its file's name, which says what it is.
    await expect(item.locator('.tab-model-name')).toHaveText(MODEL_NAME);
    await expect(item.locator('.tab-model-facts')).toHaveText(`${mb(MODEL_SIZE)} · Q4_0 · 8,192 token context · llama`);
    // Its ChatML template has no tools: it only chats, and says so.
    await expect(item.locator('.tab-model-tools')).toHaveAttribute('data-tools', 'off');
    // Q4_0 has the engine's SIMD kernels: no warning.
    await expect(item.getByTestId('tab-model-slow')).toHaveCount(0);
    await expect(item.getByRole('radio')).toBeChecked();
    const files = await storedFiles(page);
    expect(files).toHaveLength(2);
    expect(files.filter((f) => f.endsWith('.gguf'))).toHaveLength(1);
    expect(await storedBytes(page)).toBeGreaterThanOrEqual(MODEL_SIZE);

    await panel.getByLabel('Longest answer in tokens').fill('160');
    await panel.getByRole('button', { name: 'Save' }).click();
    await expect(panel.locator('.notice').last()).toContainText(`Saved. The assistant now uses In this tab with ${MODEL_NAME}`);
    await expect(panel.locator('.muted').first()).toContainText(`In use: In this tab · ${MODEL_NAME}`);
    await panel.evaluate((el) => el.scrollIntoView({ block: 'start' }));
    await saveScreenshot(page, 'tabmodel-settings');

    // The empty chat names the model, and says it only chats.
    await page.getByRole('link', { name: 'Chat' }).click();
    await expect(page.getByTestId('tools-off')).toBeVisible();
    await expect(page.locator('.empty-state .model-name')).toHaveText(`In this tab · ${MODEL_NAME}`);
    await expect(page.getByTestId('chat-only')).toContainText('This model only chats');
    await expect(page.locator('.empty-state')).not.toContainText('finds the skills');

    // Ask: the engine and the model load with progress, the prompt is
    // read with progress, then the answer streams with a tokens/s figure.
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
    expect(first.reading, 'the prompt-reading progress was shown').toBe(true);
    expect(first.lengths, 'the text arrived in pieces').toBeGreaterThan(2);
    await saveScreenshot(page, 'tabmodel-chat');

    // The same question again counts the same input tokens, though most of
    // them are in the model's cache by now.
    const firstIn = (await lastReply(page).locator('.usage-line').textContent()).match(/^(\d+) in/)[1];
    await say(page, 'What is the capital of France?');
    await expect(lastReply(page)).toHaveAttribute('data-status', 'complete', { timeout: 600_000 });
    const secondIn = Number((await lastReply(page).locator('.usage-line').textContent()).match(/^(\d+) in/)[1]);
    expect(secondIn).toBeGreaterThan(Number(firstIn));

    // Stop mid-answer: it ends at once and nothing more arrives; the
    // stopped reply keeps its token counts.
    await say(page, 'Write a long story about a dragon who learns to bake bread.');
    const text = lastReply(page).locator('.message-text');
    await expect(text).not.toBeEmpty({ timeout: 300_000 });
    await page.getByRole('button', { name: 'Stop' }).click();
    await expect(lastReply(page)).toHaveAttribute('data-status', 'cancelled', { timeout: 5_000 });
    await expect(lastReply(page).locator('.stopped')).toHaveText('Stopped.');
    await expect(lastReply(page).locator('.usage-line')).toHaveText(/^\d+ in · \d+ out tokens$/);
    const kept = await text.textContent();
    await page.waitForTimeout(3_000);
    expect(await text.textContent()).toBe(kept);
    await expect(page.getByRole('button', { name: 'Send' })).toBeEnabled();

    // After a reload the model is still listed.
    await page.reload();
    await page.waitForSelector('body[data-ready]');
    await page.getByRole('link', { name: 'Settings' }).click();
    await expect(page.locator('.provider-panel .tab-model')).toHaveCount(1, { timeout: 30_000 });
    await expect(page.locator('.provider-panel .tab-model-facts')).toContainText('Q4_0');

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
    await expect(page.locator('.provider-panel .notice').last()).toContainText(`freed ${mb(MODEL_SIZE)}`);
    expect(await storedFiles(page)).toEqual([]);
    const after = await usage(page);
    expect(before - after, `usage went from ${before} to ${after}`).toBeGreaterThan(MODEL_SIZE * 0.9);
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
    await panel.getByRole('button', { name: 'Download', exact: true }).click();
    await expect(error).toContainText('does not let other sites download its files (CORS)');
    await link.fill(`${files.url}/cut.gguf`);
    await panel.getByRole('button', { name: 'Download', exact: true }).click();
    await expect(error).toContainText('The download stopped after');
    await expect(error).toContainText('nothing was kept');
    await expect(panel.locator('.tab-model')).toHaveCount(0);
    expect(await storedFiles(page)).toEqual([]);

    await link.fill(`${files.url}/model.gguf`);
    await panel.getByRole('button', { name: 'Download', exact: true }).click();
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
    await panel.getByRole('button', { name: 'Download', exact: true }).click();
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

/// Serves `file` at /model.gguf on 127.0.0.1 with CORS, as a model host
/// does, plus /refused.gguf without CORS.
async function startModelHost(file) {
  const size = fs.statSync(file).size;
  const server = http.createServer((req, res) => {
    if (req.url.startsWith('/model.gguf')) {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(size), 'access-control-allow-origin': '*' });
      fs.createReadStream(file).pipe(res);
    } else {
      res.writeHead(404);
      res.end('no');
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
}

test('a first model in three clicks: the empty chat offers one, a suggested model downloads with progress and answers; a refused download says how to get it by hand', async ({
  page,
}) => {
  test.setTimeout(900_000);
  const host = await startModelHost(MODEL);
  try {
    const errors = await openApp(page, 'chat');
    // The suggestions live on Hugging Face, whose downloads redirect to a
    // file host; here the redirect goes to the test model on 127.0.0.1
    // (the file itself is too big for a route's body).
    let served = 0;
    await page.route('https://huggingface.co/**', async (route) => {
      served++;
      await route.fulfill({
        status: 302,
        headers: { location: `${host.url}/model.gguf`, 'access-control-allow-origin': '*' },
      });
    });

    // Click 1: the empty chat's offer opens the in-tab settings.
    await page.getByTestId('try-in-tab').click();
    const panel = page.locator('.provider-panel');
    await expect(panel.getByLabel('Provider')).toHaveValue('in-tab');
    const suggestions = panel.getByTestId('tab-suggestions').locator('.tab-suggestion');
    await expect(suggestions).toHaveCount(3);
    await expect(suggestions.first()).toContainText('about');
    await expect(suggestions.first().getByRole('link')).toHaveText('Apache 2.0');
    await saveScreenshot(page, 'tabmodel-suggestions');

    // Click 2: download one; it shows its progress, then is listed and chosen.
    await panel.getByRole('button', { name: 'Download Qwen2.5 0.5B Instruct' }).click();
    await expect(panel.getByTestId('tab-model-progress')).toBeVisible({ timeout: 30_000 });
    await expect(panel.getByTestId('tab-model-progress')).toContainText('Downloading Qwen2.5-0.5B-Instruct-Q4_K_M.gguf');
    await saveScreenshot(page, 'tabmodel-suggestion-downloading');
    await expect(panel.locator('.tab-model')).toHaveCount(1, { timeout: 300_000 });
    expect(served).toBe(1);
    await expect(panel.locator('.tab-model').getByRole('radio')).toBeChecked();
    await expect(panel.locator('.notice').last()).toContainText('Save to use it');

    // Click 3: save; the assistant answers with it.
    await panel.getByRole('button', { name: 'Save' }).click();
    await expect(panel.locator('.notice').last()).toContainText('Saved. The assistant now uses In this tab');
    await page.getByRole('link', { name: 'Chat' }).click();
    await say(page, 'Name one color.');
    await expect(lastReply(page)).toHaveAttribute('data-status', 'complete', { timeout: 600_000 });
    expect((await lastReply(page).locator('.message-text').textContent()).trim().length).toBeGreaterThan(0);

    // Delete it; with no model left, a refused download (no CORS here)
    // says how to get the file by hand.
    await page.getByRole('link', { name: 'Settings' }).click();
    await panel.locator('.tab-model').getByRole('button', { name: /^Delete / }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete model' }).click();
    await expect(panel.locator('.tab-model')).toHaveCount(0);
    await page.unroute('https://huggingface.co/**');
    await page.route('https://huggingface.co/**', (route) => route.abort('failed'));
    await panel.getByRole('button', { name: 'Download SmolLM2 360M Instruct' }).click();
    await expect(panel.getByTestId('tab-model-error')).toContainText('Hearth could not download from huggingface.co');
    const byHand = panel.getByTestId('tab-by-hand');
    await expect(byHand).toContainText('Download it yourself');
    await expect(byHand.getByRole('link')).toHaveAttribute('href', /smollm2-360m-instruct-q8_0\.gguf$/);
    await expect(byHand).toContainText('then add the file');
    expect(await storedFiles(page)).toEqual([]);
    await saveScreenshot(page, 'tabmodel-by-hand');
    expect(errors.filter((e) => !/huggingface\.co|ERR_FAILED/.test(e))).toEqual([]);
  } finally {
    await host.close();
  }
});

test('a page without cross-origin isolation gets a clear error from the engine, not a broken one', async ({ page }) => {
  test.setTimeout(300_000);
  const server = await startStatic();
  try {
    await page.goto(`${server.url}/index.html`);
    await page.waitForSelector('body[data-ready]');
    expect(await page.evaluate(() => self.crossOriginIsolated)).toBe(false);
    const out = await page.evaluate(async () => {
      const worker = new Worker('/tabmodel/worker.js');
      const lines = [];
      await new Promise((resolve) => {
        worker.onmessage = (e) => {
          if (e.data.type === 'line') lines.push(JSON.parse(e.data.line));
          if (e.data.type === 'done') resolve();
        };
        worker.postMessage({ type: 'load', id: 1, model: 'anything', context: 512 });
      });
      worker.terminate();
      return lines;
    });
    expect(out).toHaveLength(1);
    expect(out[0].error.type).toBe('unsupported');
    expect(out[0].error.message).toContain('not cross-origin isolated');
    expect(out[0].error.message).toContain('Reload the page');
  } finally {
    await server.stop();
  }
});
