// Where the tests find Chromium, the hearth binary and the built app.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, '..', '..');

export const hearthBin = process.env.HEARTH_BIN || path.join(repoRoot, 'target', 'debug', 'hearth');
export const hearthDist = process.env.HEARTH_DIST || path.join(repoRoot, 'dist');

/// Flags that keep Chromium from reaching for the (closed) network.
export function chromiumLaunchOptions() {
  return {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  };
}

export function hearthServeCommand(port, extra = '') {
  return `"${hearthBin}" serve --host 127.0.0.1 --port ${port} --dist "${hearthDist}" ${extra}`.trim();
}

/// The ports of one Playwright run: the app, and the servers the web tests
/// start on 127.0.0.1 (a page server and a fake SearXNG), which `hearth
/// serve` is told it may reach. Offset far from the app ports of other runs.
export function e2ePorts() {
  const app = Number(process.env.HEARTH_E2E_PORT || 8765);
  return { app, pages: app + 1000, searx: app + 1001 };
}

/// A fresh config directory for this run's `hearth serve`, so its token and
/// search backend setting never touch the developer's own.
export function freshConfigDir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-e2e-config-'));
}

/// The key of the `hearth serve` Playwright started: its launch link
/// carries it (`/#token=…`), as `hearth serve` prints it.
export function e2eKey() {
  const dir = process.env.HEARTH_E2E_CONFIG_DIR;
  if (!dir) throw new Error('HEARTH_E2E_CONFIG_DIR is not set; run through e2e/playwright.config.mjs');
  return fs.readFileSync(path.join(dir, 'api-token'), 'utf8').trim();
}

/// The key printed in a `hearth serve` launch link, if the line holds one.
export function keyOfLaunchLine(line) {
  const m = line.match(/#token=([A-Za-z0-9_-]+)/);
  return m ? m[1] : null;
}
