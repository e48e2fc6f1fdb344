// Playwright runs the user journeys against a real `hearth serve` that it
// starts itself on 127.0.0.1, in Debian's Chromium.
import { defineConfig } from '@playwright/test';
import { chromiumLaunchOptions, e2ePorts, freshConfigDir, hearthServeCommand } from './support/env.mjs';

const { app: port, pages, searx } = e2ePorts();
// The web tests' own servers are the only non-public destinations allowed.
// Workers inherit the environment, so they see the same directory.
if (!process.env.HEARTH_E2E_CONFIG_DIR) {
  process.env.HEARTH_E2E_CONFIG_DIR = freshConfigDir();
  process.env.HEARTH_E2E_CONFIG_DIR_FRESH = '1';
}
const serveExtra = [
  `--config-dir "${process.env.HEARTH_E2E_CONFIG_DIR}"`,
  `--allow-private-fetch 127.0.0.1:${pages}`,
  `--allow-private-fetch 127.0.0.1:${searx}`,
].join(' ');

export default defineConfig({
  testDir: './tests',
  outputDir: './test-results/artifacts',
  globalTeardown: './support/teardown.mjs',
  timeout: 60_000,
  // Screens are compared with e2e/baselines/ by `expectScreen`
  // (support/screens.mjs), not toHaveScreenshot.
  expect: { timeout: 10_000 },
  // Two cores: one worker keeps timings honest and the machine usable.
  workers: 1,
  fullyParallel: false,
  retries: 0,
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    browserName: 'chromium',
    launchOptions: chromiumLaunchOptions(),
    viewport: { width: 1280, height: 820 },
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
  },
  webServer: {
    command: hearthServeCommand(port, serveExtra),
    url: `http://127.0.0.1:${port}/healthz`,
    reuseExistingServer: false,
    timeout: 30_000,
    stdout: 'pipe',
    stderr: 'pipe',
  },
});
