// Renders the PWA's PNG icons from the SVGs in public/icons/ with headless
// Chromium. Run once after changing an icon and commit the PNGs:
//   node e2e/tools/render-icons.mjs
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';
import { chromiumLaunchOptions, repoRoot } from '../support/env.mjs';

const dir = path.join(repoRoot, 'public', 'icons');
const jobs = [
  // [source, size, output, transparent corners]
  ['icon.svg', 192, 'icon-192.png', true],
  ['icon.svg', 512, 'icon-512.png', true],
  ['icon-maskable.svg', 192, 'icon-maskable-192.png', false],
  ['icon-maskable.svg', 512, 'icon-maskable-512.png', false],
  ['icon-maskable.svg', 180, 'apple-touch-icon.png', false],
];

const browser = await chromium.launch(chromiumLaunchOptions());
try {
  for (const [source, size, output, transparent] of jobs) {
    const svg = fs.readFileSync(path.join(dir, source), 'utf8');
    const page = await browser.newPage({ viewport: { width: size, height: size }, deviceScaleFactor: 1 });
    const src = `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
    await page.setContent(
      `<html><body style="margin:0;background:transparent"><img src="${src}" width="${size}" height="${size}" style="display:block"></body></html>`,
    );
    await page.waitForFunction(() => document.images[0].complete);
    await page.screenshot({ path: path.join(dir, output), omitBackground: transparent });
    await page.close();
    console.log(`${output}: ${fs.statSync(path.join(dir, output)).size} bytes`);
  }
} finally {
  await browser.close();
}
