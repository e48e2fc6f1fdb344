// Playwright runs the user journeys against a real `hearth serve` that it
// starts itself on 127.0.0.1, in Debian's Chromium.
import { defineConfig } from '@playwright/test';
import { chromiumLaunchOptions, hearthServeCommand } from './support/env.mjs';

const port = Number(process.env.HEARTH_E2E_PORT || 8765);

export default defineConfig({
  testDir: './tests',
  outputDir: './test-results/artifacts',
  timeout: 60_000,
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
    command: hearthServeCommand(port),
    url: `http://127.0.0.1:${port}/healthz`,
    reuseExistingServer: false,
    timeout: 30_000,
    stdout: 'pipe',
    stderr: 'pipe',
  },
});
