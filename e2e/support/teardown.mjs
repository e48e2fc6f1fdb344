// Removes the run's fresh config directory (see playwright.config.mjs), so
// tokens and search settings of test runs do not pile up in the temp dir.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export default async function teardown() {
  const dir = process.env.HEARTH_E2E_CONFIG_DIR;
  // Only a directory this run made: never one a developer passed in.
  if (dir && process.env.HEARTH_E2E_CONFIG_DIR_FRESH === '1'
      && path.dirname(dir) === os.tmpdir() && path.basename(dir).startsWith('hearth-e2e-config-')) {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
