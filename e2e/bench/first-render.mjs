// Time to first render: from navigation start until the app has mounted
// (it sets a "hearth-ready" performance mark), over 5 cold loads with a
// fresh browser context each. Prints the median and every sample.
import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
import { chromiumLaunchOptions, hearthBin, hearthDist } from '../support/env.mjs';

const port = 8790 + Math.floor(Math.random() * 100);
const server = spawn(hearthBin, ['serve', '--host', '127.0.0.1', '--port', String(port), '--dist', hearthDist], { stdio: 'ignore' });
const base = `http://127.0.0.1:${port}`;
for (let i = 0; i < 100; i++) {
  try { if ((await fetch(`${base}/healthz`)).ok) break; } catch { /* not up yet */ }
  await new Promise((r) => setTimeout(r, 100));
}

const browser = await chromium.launch(chromiumLaunchOptions());
const samples = [];
try {
  for (let i = 0; i < 5; i++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(base + '/');
    await page.waitForSelector('body[data-ready]');
    const ms = await page.evaluate(() => {
      const mark = performance.getEntriesByName('hearth-ready')[0];
      return mark ? mark.startTime : NaN;
    });
    samples.push(ms);
    await context.close();
  }
} finally {
  await browser.close();
  server.kill();
}
const sorted = [...samples].sort((a, b) => a - b);
const median = sorted[Math.floor(sorted.length / 2)];
console.log(`  time to first render: median ${median.toFixed(1)} ms over ${samples.length} cold loads (samples: ${samples.map((s) => s.toFixed(1)).join(', ')} ms)`);
if (!Number.isFinite(median)) process.exit(1);
