// Screens compared with baselines committed in e2e/baselines/.
//
// The comparison works on blocks, not pixels: both pictures are cut into
// BLOCK×BLOCK squares and a square differs when the mean of a colour
// channel over it moves by more than MAX_MEAN_MOVE (of 255). Font hinting
// and sub-pixel glyph positioning redistribute a glyph's ink within a few
// pixels, so a square's mean barely moves; a shifted, resized, recoloured,
// missing or added element moves it a lot. A screen passes when no square
// differs. Calibrated in docs/testing.md.
import { test } from '@playwright/test';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { repoRoot } from './env.mjs';

// Playwright's own PNG codec (its exported utilities bundle).
const { PNG } = createRequire(import.meta.url)('playwright-core/lib/utilsBundle');

export const BLOCK = 8;
export const MAX_MEAN_MOVE = 32;
export const baselinesDir = path.join(repoRoot, 'e2e', 'baselines');

/// Mean R, G, B of every BLOCK×BLOCK square of a decoded PNG.
function blockMeans(img) {
  const w = Math.ceil(img.width / BLOCK);
  const h = Math.ceil(img.height / BLOCK);
  const sums = new Float64Array(w * h * 3);
  const counts = new Float64Array(w * h);
  for (let y = 0; y < img.height; y++) {
    const row = Math.floor(y / BLOCK) * w;
    for (let x = 0; x < img.width; x++) {
      const i = (y * img.width + x) * 4;
      const b = row + Math.floor(x / BLOCK);
      sums[b * 3] += img.data[i];
      sums[b * 3 + 1] += img.data[i + 1];
      sums[b * 3 + 2] += img.data[i + 2];
      counts[b] += 1;
    }
  }
  for (let b = 0; b < w * h; b++) for (let c = 0; c < 3; c++) sums[b * 3 + c] /= counts[b];
  return { w, h, means: sums };
}

/// Compares two PNGs (bytes). Returns null when they match within the
/// tolerance, else { message, diff } with a picture of where they differ:
/// the actual screen faded, differing squares in red.
export function compareScreens(actualPng, expectedPng) {
  const actual = PNG.sync.read(actualPng);
  const expected = PNG.sync.read(expectedPng);
  if (actual.width !== expected.width || actual.height !== expected.height) {
    return { message: `the picture is ${actual.width}×${actual.height} px, its baseline ${expected.width}×${expected.height} px`, diff: null };
  }
  const a = blockMeans(actual);
  const e = blockMeans(expected);
  const differing = [];
  let largest = 0;
  for (let b = 0; b < a.w * a.h; b++) {
    let move = 0;
    for (let c = 0; c < 3; c++) move = Math.max(move, Math.abs(a.means[b * 3 + c] - e.means[b * 3 + c]));
    largest = Math.max(largest, move);
    if (move > MAX_MEAN_MOVE) differing.push(b);
  }
  if (differing.length === 0) return null;
  const diff = new PNG({ width: actual.width, height: actual.height });
  for (let i = 0; i < actual.data.length; i += 4) {
    const grey = (actual.data[i] + actual.data[i + 1] + actual.data[i + 2]) / 3;
    diff.data[i] = diff.data[i + 1] = diff.data[i + 2] = 255 - (255 - grey) * 0.25;
    diff.data[i + 3] = 255;
  }
  for (const b of differing) {
    const bx = (b % a.w) * BLOCK;
    const by = Math.floor(b / a.w) * BLOCK;
    for (let y = by; y < Math.min(by + BLOCK, actual.height); y++) {
      for (let x = bx; x < Math.min(bx + BLOCK, actual.width); x++) {
        const i = (y * actual.width + x) * 4;
        diff.data[i] = 230;
        diff.data[i + 1] = 30;
        diff.data[i + 2] = 30;
      }
    }
  }
  return {
    message:
      `${differing.length} of ${a.w * a.h} squares of ${BLOCK}×${BLOCK} px differ ` +
      `(largest colour move ${largest.toFixed(0)} of 255; the tolerance is ${MAX_MEAN_MOVE})`,
    diff: PNG.sync.write(diff),
  };
}

/// Screenshots until two in a row are the same (the page has settled).
/// If it never settles, the last two pictures are kept beside the
/// failure with the squares that moved marked, to show what kept moving.
async function settledScreenshot(target, style, info) {
  const options = { animations: 'disabled', caret: 'hide', scale: 'css', style };
  let last = await target.screenshot(options);
  for (let i = 0; i < 20; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const next = await target.screenshot(options);
    if (next.equals(last)) return next;
    // A compositor may shade a frame's edge a few levels differently from
    // one picture to the next; below the comparison's own tolerance that
    // is settled too, once it has had half a second to stop.
    const moved = compareScreens(next, last);
    if (!moved && i >= 4) return next;
    if (i === 19) {
      fs.writeFileSync(info.outputPath('unsettled-a.png'), last);
      fs.writeFileSync(info.outputPath('unsettled-b.png'), next);
      if (moved) fs.writeFileSync(info.outputPath('unsettled-moved.png'), moved.diff);
    }
    last = next;
  }
  throw new Error('the screen kept changing for 2 s, so there is no settled picture to compare (see unsettled-*.png beside the failure)');
}

/// Compares the screen (or the element `part`) with its baseline
/// e2e/baselines/`name`.png and keeps the picture with the other
/// screenshots. `hide`: CSS selectors of what differs from run to run
/// (times, durations, free ports, the build id), made invisible in both
/// pictures; they keep their place, so the layout around them is still
/// compared. `part`: a locator, to compare only that element (a small
/// element's change then fills more of the picture).
///
/// A missing baseline fails. `cargo xtask baselines` (Playwright's
/// `--update-snapshots=changed`) writes the baselines that differ or are
/// missing. A test that calls this carries the `@baseline` tag, so that
/// command finds it.
export async function expectScreen(page, name, { hide = [], part } = {}) {
  const info = test.info();
  if (!info.tags.includes('@baseline')) {
    throw new Error(`"${info.title}" compares the screen "${name}" but lacks the @baseline tag`);
  }
  // The pointer rests where no hover style shows, wherever the last click was.
  await page.mouse.move(0, 0);
  const style = hide.map((sel) => `${sel} { visibility: hidden !important; }`).join('\n');
  const shot = await settledScreenshot(part ?? page, style, info);
  const screens = path.join(repoRoot, 'e2e', 'test-results', 'screens');
  fs.mkdirSync(screens, { recursive: true });
  fs.writeFileSync(path.join(screens, `${name}.png`), shot);

  const baseline = path.join(baselinesDir, `${name}.png`);
  const update = info.config.updateSnapshots;
  if (!fs.existsSync(baseline)) {
    if (update === 'all' || update === 'changed' || update === 'missing') {
      fs.mkdirSync(baselinesDir, { recursive: true });
      fs.writeFileSync(baseline, shot);
      return;
    }
    throw new Error(`no baseline for the screen "${name}" (${path.relative(repoRoot, baseline)}): run cargo xtask baselines, look at the picture, commit it`);
  }
  const difference = compareScreens(shot, fs.readFileSync(baseline));
  if (!difference) return;
  if (update === 'all' || update === 'changed') {
    fs.writeFileSync(baseline, shot);
    return;
  }
  const actualPath = info.outputPath(`${name}-actual.png`);
  const expectedPath = info.outputPath(`${name}-expected.png`);
  fs.writeFileSync(actualPath, shot);
  fs.copyFileSync(baseline, expectedPath);
  await info.attach(`${name}-actual.png`, { path: actualPath, contentType: 'image/png' });
  await info.attach(`${name}-expected.png`, { path: expectedPath, contentType: 'image/png' });
  let where = path.relative(repoRoot, actualPath);
  if (difference.diff) {
    const diffPath = info.outputPath(`${name}-diff.png`);
    fs.writeFileSync(diffPath, difference.diff);
    await info.attach(`${name}-diff.png`, { path: diffPath, contentType: 'image/png' });
    where = path.relative(repoRoot, diffPath);
  }
  throw new Error(`the screen "${name}" differs from e2e/baselines/${name}.png: ${difference.message}; see ${where}`);
}
