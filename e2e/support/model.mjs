// The scripted fake model server (crates/testkit), started by the tests
// themselves on 127.0.0.1, and the settings that point the app at it.
import { expect } from '@playwright/test';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from './env.mjs';

export const fakeModelBin =
  process.env.HEARTH_FAKE_MODEL || path.join(repoRoot, 'target', 'debug', 'hearth-fake-model');

/// Starts `hearth-fake-model` with one of crates/testkit/scripts/*.json on
/// 127.0.0.1 (`port` 0 picks a free one). Resolves once it listens.
export async function startFakeModel(script, port = 0) {
  const file = path.join(repoRoot, 'crates', 'testkit', 'scripts', script);
  const child = spawn(fakeModelBin, ['--host', '127.0.0.1', '--port', String(port), '--script', file], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`hearth-fake-model did not start: ${stderr}`)), 15_000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/[^\s]+)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`hearth-fake-model exited (${code}): ${stderr}`));
    });
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    url,
    base: `${url}/v1`,
    port: Number(new URL(url).port),
    /// The requests it answered, as the server recorded them.
    async requests() {
      const r = await fetch(`${url}/_fake/requests`);
      return r.json();
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGINT');
      await exited;
    },
  };
}

/// Starts the fake model on a fixed `port` (a preset's, which the app
/// probes). While another program holds the port it tries again for up to
/// `waitMs`, then fails saying so; any other start error fails at once.
export async function startFakeModelOn(script, port, waitMs = 120_000) {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      return await startFakeModel(script, port);
    } catch (e) {
      if (!/cannot listen/.test(e.message)) throw e;
      if (Date.now() > deadline) {
        throw new Error(`port ${port} stayed taken for ${waitMs / 1000} s, so the fake model cannot listen where the app looks: ${e.message}`);
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

/// Points the app at an OpenAI-compatible server through Settings, the
/// way a person does: provider, base URL, Test connection, model, Save.
export async function useProvider(page, base, { apiKey = '', model = 'hearth-fake', provider = 'custom-openai' } = {}) {
  await page.getByRole('link', { name: 'Settings' }).click();
  const panel = page.locator('.provider-panel');
  await panel.getByLabel('Provider').selectOption(provider);
  await panel.getByLabel('Base URL').fill(base);
  if (apiKey) await panel.getByLabel('API key').fill(apiKey);
  await panel.getByRole('button', { name: 'Test connection' }).click();
  await expect(panel.locator('.check')).toContainText('Connected');
  await panel.getByLabel('Model', { exact: true }).selectOption(model);
  await panel.getByRole('button', { name: 'Save' }).click();
  await expect(panel.locator('.notice')).toContainText('Saved');
  await page.getByRole('link', { name: 'Chat' }).click();
}

/// Types a message into the composer and sends it with Enter.
export async function say(page, text) {
  const composer = page.getByRole('textbox', { name: 'Message or command' });
  await composer.fill(text);
  await composer.press('Enter');
}

/// Waits until the app's pending IndexedDB writes to `store` are done:
/// read-write transactions on a store run in the order they were made, so
/// one made now completes after every save the app has already started.
export async function flushStorage(page, store = 'conversations') {
  await page.evaluate((name) => new Promise((resolve, reject) => {
    const open = indexedDB.open('hearth');
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const db = open.result;
      const tx = db.transaction(name, 'readwrite');
      tx.oncomplete = () => { db.close(); resolve(); };
      tx.onerror = () => { db.close(); reject(tx.error); };
    };
  }), store);
}

/// Reloads once pending saves are stored, and waits for the app.
export async function reloadApp(page) {
  await flushStorage(page);
  await page.reload();
  await page.waitForSelector('body[data-ready]');
}
