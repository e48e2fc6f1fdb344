// Time to first render: from navigation start until the page has mounted
// (it sets a "hearth-ready" performance mark), over cold loads with a fresh
// browser context each. The anchor is a bare Leptos page built with the
// same profile and tools (e2e/bench/bare-leptos, built by `cargo xtask
// bench` into HEARTH_BARE_DIST), served by the same `hearth serve`, loaded
// in turns with the app so both see the same machine.
//
// Also measured, on Hearth's loads only: the time until the chat answers
// the first keystroke. As soon as the composer is in the page, the bench
// types "/" into it; the figure is the time from navigation start until
// the composer's list of commands is in the document, which needs the
// app's code to have run the composer's input handler and drawn its answer.
import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { chromiumLaunchOptions, hearthBin, hearthDist, repoRoot } from '../support/env.mjs';
import { freePort } from '../support/mcp.mjs';
import { figure, median, ratio } from './figures.mjs';

const LOADS = Number(process.env.HEARTH_BENCH_LOADS || 7);
const bareDist = process.env.HEARTH_BARE_DIST || path.join(repoRoot, 'target', 'bench', 'bare-leptos');

async function serve(dist) {
  const port = await freePort();
  const child = spawn(hearthBin, ['serve', '--host', '127.0.0.1', '--port', String(port), '--dist', dist], { stdio: 'ignore' });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    try { if ((await fetch(`${base}/healthz`)).ok) break; } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { base, stop: () => child.kill() };
}

async function coldLoad(browser, base, { keystroke = false } = {}) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(base + '/');
  await page.waitForSelector('body[data-ready]');
  const { ms, phases } = await page.evaluate(() => {
    const at = (name) => performance.getEntriesByName(name)[0]?.startTime ?? NaN;
    // The first-load module: its response, and the app's marks after it.
    const wasm = performance.getEntriesByType('resource').find((r) => r.name.endsWith('_bg.wasm'));
    return {
      ms: at('hearth-ready'),
      phases: {
        wasm: wasm ? wasm.responseEnd : NaN,
        start: at('hearth-start'),
        db: at('hearth-db-open'),
        runtime: at('hearth-runtime'),
        ready: at('hearth-ready'),
      },
    };
  });
  let answered = NaN;
  if (keystroke) {
    const composer = page.getByRole('textbox', { name: 'Message or command' });
    await composer.press('/');
    await page.waitForSelector('ul.suggestions[role=listbox]');
    answered = await page.evaluate(() => performance.now());
  }
  await context.close();
  if (!Number.isFinite(ms)) throw new Error(`${base} set no hearth-ready mark`);
  return keystroke ? { ms, answered, phases } : ms;
}

const app = await serve(hearthDist);
const bare = await serve(bareDist);
const browser = await chromium.launch(chromiumLaunchOptions());
const samples = { app: [], bare: [], keystroke: [], phases: [] };
try {
  // One warm-up load each (the browser's own start-up), not counted.
  await coldLoad(browser, app.base);
  await coldLoad(browser, bare.base);
  for (let i = 0; i < LOADS; i++) {
    const load = await coldLoad(browser, app.base, { keystroke: true });
    samples.app.push(load.ms);
    samples.keystroke.push(load.answered);
    samples.phases.push(load.phases);
    samples.bare.push(await coldLoad(browser, bare.base));
  }
} finally {
  await browser.close();
  app.stop();
  bare.stop();
}
const show = (xs) => xs.map((s) => s.toFixed(0)).join(', ');
const anchor = { figure: 'first render of a bare Leptos page', value: median(samples.bare) };
const hearth = { figure: 'first render of Hearth', value: median(samples.app) };
figure({ ...anchor, unit: 'ms', detail: `median of ${LOADS} cold loads: ${show(samples.bare)} ms` });
figure({ ...hearth, unit: 'ms', detail: `median of ${LOADS} cold loads: ${show(samples.app)} ms` });
ratio('time to first render vs a bare Leptos page', hearth, anchor, { max: 1.5 });
figure({
  figure: 'time until the chat answers the first keystroke',
  value: median(samples.keystroke),
  unit: 'ms',
  detail: `from navigation start, "/" typed as soon as the composer is there, until its command list is drawn; median of ${LOADS}: ${show(samples.keystroke)} ms`,
});
// Where Hearth's first render goes, as medians of the same loads: each
// span ends at a mark the app sets (src/lib.rs) or at the module's arrival.
const span = (from, to) => median(samples.phases.map((p) => (from ? p[to] - p[from] : p[to])));
for (const [name, from, to, what] of [
  ['first render: the first-load module downloaded', null, 'wasm', 'navigation start until the main module\'s response ended'],
  ['first render: module compiled and started', 'wasm', 'start', 'the module\'s response end until the app\'s code first runs'],
  ['first render: storage opened', 'start', 'db', 'IndexedDB opened (created, on these fresh profiles)'],
  ['first render: services assembled', 'db', 'runtime', 'registry, index, stored data, sandbox host'],
  ['first render: first screen mounted', 'runtime', 'ready', 'the Leptos app mounted and drawn into the document'],
]) {
  figure({ figure: name, value: span(from, to), unit: 'ms', detail: `${what}; median of ${LOADS}` });
}
