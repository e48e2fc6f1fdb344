// Artifacts' preview, as figures (never assertions), on a page of about
// 500 lines (a 494-row table, 25 KB) that the scripted model makes and
// then replaces with a second version:
//   - open: from the click on the card's "Open artifact" until the page
//     runs in the preview (the `artifact_panel` chunk on first use, the
//     sandbox page proving its policy, the document built with its kind's
//     policy first);
//   - update: with the panel open, from the model's last token of the
//     `update_artifact` call (the end of that streamed response) until the
//     new version runs in the preview (the call through the permission
//     layer and the log, the store, the panel reading the new version, the
//     sandbox page loading it);
// against the anchor, the browser showing the same page alone in a
// sandboxed srcdoc frame of the same tab. The page's last script posts to
// the top window, which is how each figure knows the page has run.
// Medians of RUNS, each in a conversation of its own.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromiumLaunchOptions } from '../support/env.mjs';
import { startServe } from '../support/serve.mjs';
import { startFakeModel } from '../support/model.mjs';
import { figure, median, ratio } from './figures.mjs';
import { setProvider } from './provider.mjs';

const RUNS = Number(process.env.HEARTH_BENCH_RUNS || 5);
const SCRIPT = 'artifacts-bench.json';

/// The two versions the script's model writes.
function pages() {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const script = JSON.parse(fs.readFileSync(path.join(here, '../../crates/testkit/scripts', SCRIPT), 'utf8'));
  const source = (name) => script.turns.find((t) => t.name === name).reply.tool_calls[0].arguments.source;
  return { v1: source('create the report'), v2: source('update the report') };
}

/// Listens, in the top window, for the page saying it has run.
async function listen(page) {
  await page.evaluate(() => {
    window.benchRan = {};
    window.addEventListener('message', (e) => {
      const v = e.data && e.data.artifactBench;
      if (v && !window.benchRan[v]) window.benchRan[v] = performance.now();
    });
  });
}

/// Resolves with the time the page of version `v` ran, once it has.
function ranAt(page, v) {
  return page.waitForFunction((v) => window.benchRan[v], v, { timeout: 60_000, polling: 20 }).then((h) => h.jsonValue());
}

/// The browser alone: the page in a sandboxed srcdoc frame of an empty
/// page (the app's own policy would refuse the page's script), from
/// setting the frame until the page's script has run.
async function alone(page, source) {
  return page.evaluate((source) => new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the bare frame did not run the page within 60 s')), 60_000);
    const frame = document.createElement('iframe');
    frame.setAttribute('sandbox', 'allow-scripts');
    frame.style.cssText = 'position:fixed;left:-2000px;width:600px;height:400px';
    const done = (e) => {
      if (e.source !== frame.contentWindow) return;
      clearTimeout(timer);
      window.removeEventListener('message', done);
      frame.remove();
      resolve(performance.now() - t);
    };
    window.addEventListener('message', done);
    const t = performance.now();
    frame.srcdoc = source;
    document.body.append(frame);
  }), source);
}

/// Types a message and sends it.
async function say(page, text) {
  const composer = page.getByRole('textbox', { name: 'Message or command' });
  await composer.fill(text);
  await composer.press('Enter');
}

/// Starts collecting the requests to the model (an observer, since the
/// page's buffer of resource timings fills during the app's start).
async function watchRequests(page) {
  await page.evaluate(() => {
    window.benchRequests = [];
    window.benchObserver?.disconnect();
    window.benchObserver = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        if (e.name.endsWith('/chat/completions')) window.benchRequests.push(e);
      }
    });
    window.benchObserver.observe({ type: 'resource' });
  });
}

/// The end of the streamed response of the `n`th request to the model
/// since [`watchRequests`], once it has ended.
async function responseEnd(page, n) {
  const h = await page.waitForFunction((n) => {
    const sent = [...window.benchRequests].sort((a, b) => a.startTime - b.startTime);
    return sent.length > n ? sent[n].responseEnd : null;
  }, n, { timeout: 60_000, polling: 20 });
  return h.jsonValue();
}

const serve = await startServe();
const model = await startFakeModel(SCRIPT);
const browser = await chromium.launch(chromiumLaunchOptions());
try {
  const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
  const blank = await browser.newPage();
  page.on('pageerror', (e) => console.error(`  page error: ${e.message}`));
  await page.goto(serve.launch);
  await page.waitForSelector('body[data-ready]');
  await setProvider(page, serve, model, 'hearth-fake');
  // The service worker's caches are filled after the first render; the
  // figures are of a tab past that, as a person's second visit is.
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 30_000 });
  await listen(page);

  const { v1, v2 } = pages();
  console.log(`artifacts: a page of ${v2.split('\n').length - 1} lines (${(v2.length / 1024).toFixed(0)} KB), ${RUNS} runs`);
  // A first bare frame starts the sandboxed frames' process.
  await alone(blank, v1);
  const bare = [];
  const open = [];
  const update = [];
  for (let n = 0; n < RUNS; n++) {
    bare.push(await alone(blank, v1));
    await page.evaluate(() => { window.benchRan = {}; });
    await say(page, `bench report ${n}`);
    await page.locator('.message.assistant').filter({ hasText: 'The report is beside the chat.' }).waitFor();
    const button = page.getByRole('button', { name: 'Open artifact' }).last();
    await button.waitFor();
    const clicked = await button.evaluate((b) => {
      const t = performance.now();
      b.click();
      return t;
    });
    open.push((await ranAt(page, 'v1')) - clicked);

    await watchRequests(page);
    await say(page, `bench update ${n}`);
    // The turn's requests: the discovery call, the update call, the reply.
    const lastToken = await responseEnd(page, 1);
    update.push((await ranAt(page, 'v2')) - lastToken);
    await page.locator('.message.assistant').filter({ hasText: 'Done:' }).last().waitFor();
    await page.getByRole('button', { name: 'Close the artifact' }).click();
    await page.locator('.artifact-panel').waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'New chat' }).click();
  }
  const fmt = (xs) => xs.map((x) => x.toFixed(0)).join(', ');
  console.log(`  bare sandboxed frame (anchor): ${fmt(bare)} ms`);
  console.log(`  click to preview:              ${fmt(open)} ms (the first fetches the panel's chunk)`);
  console.log(`  last token to updated preview: ${fmt(update)} ms`);
  const anchor = { figure: 'artifacts: the browser showing a 500-line page alone in a sandboxed frame', value: median(bare) };
  figure({ ...anchor, unit: 'ms', detail: `median of ${RUNS}` });
  const opened = { figure: 'artifacts: Open artifact to a running preview, 500-line page', value: median(open) };
  figure({ ...opened, unit: 'ms', detail: `median of ${RUNS}; first ${open[0].toFixed(0)} ms` });
  ratio('artifacts: opening against the bare frame', opened, anchor);
  const updated = { figure: "artifacts: the model's last token to the updated preview, 500-line page", value: median(update) };
  figure({ ...updated, unit: 'ms', detail: `median of ${RUNS}` });
  ratio('artifacts: an update against the bare frame', updated, anchor);
} finally {
  await browser.close();
  await model.stop();
  await serve.stop();
}
