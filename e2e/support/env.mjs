// Where the tests find Chromium, the hearth binary and the built app.
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
