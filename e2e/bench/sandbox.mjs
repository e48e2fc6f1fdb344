// Sandbox and file benchmarks in headless Chromium against `hearth serve`.
// Prints figures; asserts nothing. Durations are the call path's own
// `duration_ms` from the activity log (the whole call: permission hooks,
// input checks, the sandbox round trip, output checks), read back from
// IndexedDB.
//
//   JS round trip for 1+1: cold (first run in a fresh profile, which starts
//   the sandbox) and warm, against its anchor: a bare Worker made from a
//   blob on the app's origin, handed the same code by postMessage, its
//   answer posted back, then terminated (the sandbox runs each snippet in a
//   fresh Worker, so that is the least any run costs), in the same run.
//   Python cold start in the sandbox against bare Pyodide in a module
//   worker on the same origin, each from a fresh profile.
//   Warm Python call overhead: a 1+1 run, and the part spent in the worker.
//   Granting, listing and reading 1,000 files.
import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromiumLaunchOptions, hearthBin, hearthDist } from '../support/env.mjs';
import { figure, ratio } from './figures.mjs';

const COLD_TRIALS = Number(process.env.HEARTH_BENCH_COLD || 5);
const WARM_RUNS = Number(process.env.HEARTH_BENCH_WARM || 30);
const FILES = 1000;
// HEARTH_BENCH_ONLY=js|python|files runs one section.
const ONLY = process.env.HEARTH_BENCH_ONLY || '';
const section = (name) => !ONLY || ONLY === name;

const port = 8890 + Math.floor(Math.random() * 100);
const server = spawn(hearthBin, ['serve', '--host', '127.0.0.1', '--port', String(port), '--dist', hearthDist], { stdio: 'ignore' });
const base = `http://127.0.0.1:${port}`;
for (let i = 0; i < 100; i++) {
  try { if ((await fetch(`${base}/healthz`)).ok) break; } catch { /* not up yet */ }
  await new Promise((r) => setTimeout(r, 100));
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const p90 = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(s.length * 0.9))]; };
const ms = (x) => (x < 10 ? `${x.toFixed(2)} ms` : x < 1000 ? `${x.toFixed(1)} ms` : `${(x / 1000).toFixed(2)} s`);
const line = (label, value, goal = '') => console.log(`  ${label.padEnd(58)} ${value.padStart(12)}${goal ? `   (${goal})` : ''}`);

const browser = await chromium.launch(chromiumLaunchOptions());

async function freshPage({ withoutPickers = false } = {}) {
  const context = await browser.newContext();
  if (withoutPickers) {
    await context.addInitScript(() => { delete window.showDirectoryPicker; delete window.showOpenFilePicker; });
  }
  const page = await context.newPage();
  await page.goto(`${base}/#/chat`);
  await page.waitForSelector('body[data-ready]');
  return { context, page };
}

/// Runs a skill from the composer; returns the call's record from the log.
async function run(page, skill, args) {
  const cards = page.locator('.result-card');
  const before = await cards.count();
  const composer = page.getByRole('textbox', { name: 'Message or command' });
  await composer.fill(`/${skill} ${JSON.stringify(args)}`);
  await composer.press('Enter');
  await cards.nth(before).waitFor({ timeout: 300_000 });
  const record = await page.evaluate(() => new Promise((resolve, reject) => {
    const open = indexedDB.open('hearth');
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const q = open.result.transaction('activity').objectStore('activity').getAll();
      q.onsuccess = () => {
        open.result.close();
        resolve(q.result.sort((a, b) => b.result.started_at_ms - a.result.started_at_ms)[0]);
      };
    };
  }));
  if (record.result.status !== 'completed') throw new Error(`${skill} failed: ${record.result.error}`);
  return record;
}

const report = (record) => record.result.content.find((c) => c.type === 'json')?.value;

try {
  // --- JavaScript ----------------------------------------------------------
  if (section('js')) {
  const cold = [];
  const prestarted = [];
  let warm = [];
  let warmInner = [];
  for (let i = 0; i < COLD_TRIALS; i++) {
    // After the app has idled a moment, its sandbox has started itself.
    const idle = await freshPage();
    await idle.page.waitForTimeout(3000);
    prestarted.push((await run(idle.page, 'run_javascript', { code: '1+1' })).result.duration_ms);
    await idle.context.close();
    const { context, page } = await freshPage();
    cold.push((await run(page, 'run_javascript', { code: '1+1' })).result.duration_ms);
    if (i === 0) {
      for (let j = 0; j < WARM_RUNS; j++) {
        const r = await run(page, 'run_javascript', { code: '1+1' });
        warm.push(r.result.duration_ms);
        warmInner.push(report(r).run_ms);
      }
    }
    await context.close();
  }
  // The anchor, in a fresh page on the same origin.
  const bare = await freshPage();
  const bareRuns = await bare.page.evaluate(async (n) => {
    const source = 'onmessage = (m) => postMessage(String(eval(m.data)));';
    const url = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
    const once = () => new Promise((resolve, reject) => {
      const t0 = performance.now();
      const w = new Worker(url);
      w.onmessage = (m) => { w.terminate(); m.data === '2' ? resolve(performance.now() - t0) : reject(new Error(m.data)); };
      w.onerror = (e) => reject(new Error(e.message));
      w.postMessage('1+1');
    });
    const fresh = [];
    for (let i = 0; i < n + 5; i++) fresh.push(await once());
    // And a warm Worker's postMessage alone, for scale.
    const w = new Worker(url);
    const ping = () => new Promise((resolve) => { const t0 = performance.now(); w.onmessage = () => resolve(performance.now() - t0); w.postMessage('1+1'); });
    const warmPing = [];
    for (let i = 0; i < n + 5; i++) warmPing.push(await ping());
    w.terminate();
    return { fresh: fresh.slice(5), warmPing: warmPing.slice(5) };
  }, WARM_RUNS);
  await bare.context.close();
  const anchor = { figure: 'bare Worker: new Worker, postMessage 1+1, answer, terminate', value: median(bareRuns.fresh) };
  figure({ ...anchor, unit: 'ms', detail: `median of ${WARM_RUNS}, p90 ${ms(p90(bareRuns.fresh))}` });
  figure({ figure: 'bare Worker: postMessage round trip to a running Worker', value: median(bareRuns.warmPing), unit: 'ms', detail: `median of ${WARM_RUNS}` });
  const warmJs = { figure: 'warm JS round trip for 1+1 (whole call)', value: median(warm) };
  figure({ ...warmJs, unit: 'ms', goal: { max: 5 }, detail: `median of ${WARM_RUNS}, p90 ${ms(p90(warm))}; ${ms(median(warmInner))} inside the sandbox page` });
  ratio('warm JS round trip vs bare Worker', warmJs, anchor, { max: 3 });
  figure({ figure: 'cold JS: first run, sandbox started by it', value: median(cold), unit: 'ms', goal: { max: 50 }, detail: `median of ${COLD_TRIALS}` });
  figure({ figure: 'cold JS: first run, sandbox pre-started at idle', value: median(prestarted), unit: 'ms', goal: { max: 50 }, detail: `median of ${COLD_TRIALS}` });
  console.log('\n  JavaScript round trip for 1+1');
  line(`bare Worker anchor (median of ${WARM_RUNS})`, ms(anchor.value));
  line(`cold: first run, sandbox started by it (median of ${COLD_TRIALS})`, ms(median(cold)), 'goal ≤ 50 ms');
  line(`cold: first run, sandbox pre-started at idle (median of ${COLD_TRIALS})`, ms(median(prestarted)), 'goal ≤ 50 ms');
  line(`warm: median of ${WARM_RUNS} (p90 ${ms(p90(warm))})`, ms(median(warm)), 'goal ≤ 5 ms');
  line('warm: of which inside the sandbox page (worker round trip)', ms(median(warmInner)));
  console.log(`    cold samples: ${cold.map(ms).join(', ')}`);
  }

  // --- Python cold start: sandbox against bare Pyodide --------------------
  if (section('python')) {
  const sandboxed = [];
  const bare = [];
  let pyWarm = [];
  let pyInner = [];
  for (let i = 0; i < COLD_TRIALS; i++) {
    {
      const { context, page } = await freshPage();
      const r = await run(page, 'run_python', { code: '1+1' });
      sandboxed.push(r.result.duration_ms);
      if (i === 0) {
        for (let j = 0; j < WARM_RUNS; j++) {
          const w = await run(page, 'run_python', { code: '1+1' });
          pyWarm.push(w.result.duration_ms);
          pyInner.push(report(w).run_ms);
        }
      }
      await context.close();
    }
    {
      const { context, page } = await freshPage();
      bare.push(await page.evaluate(() => new Promise((resolve, reject) => {
        const origin = location.origin;
        const source = `import { loadPyodide } from '${origin}/pyodide/pyodide.mjs';
          const py = await loadPyodide({ indexURL: '${origin}/pyodide/' });
          postMessage(String(py.runPython('1+1')));`;
        const t0 = performance.now();
        const worker = new Worker(URL.createObjectURL(new Blob([source], { type: 'text/javascript' })), { type: 'module' });
        worker.onmessage = (m) => (m.data === '2' ? resolve(performance.now() - t0) : reject(new Error(m.data)));
        worker.onerror = (e) => reject(new Error(e.message));
      })));
      await context.close();
    }
  }
  const pyAnchor = { figure: 'bare Pyodide cold start in a module Worker, same origin', value: median(bare) };
  const pyCold = { figure: 'Python cold start in the sandbox (whole first call)', value: median(sandboxed) };
  figure({ ...pyAnchor, unit: 'ms', detail: `median of ${COLD_TRIALS} fresh profiles` });
  figure({ ...pyCold, unit: 'ms', detail: `median of ${COLD_TRIALS} fresh profiles` });
  ratio('Python cold start vs bare Pyodide', pyCold, pyAnchor, { max: 1.2 });
  figure({ figure: 'warm Python call for 1+1 (whole call)', value: median(pyWarm), unit: 'ms', goal: { max: 5 }, detail: `median of ${WARM_RUNS}, p90 ${ms(p90(pyWarm))}; ${ms(median(pyInner))} inside the sandbox page` });
  const coldRatio = median(sandboxed) / median(bare);
  console.log('\n  Python cold start (fresh profile each: fetch, compile, start, run 1+1)');
  line(`in the sandbox, whole first call (median of ${COLD_TRIALS})`, ms(median(sandboxed)));
  line(`bare Pyodide in a module worker, same origin (median of ${COLD_TRIALS})`, ms(median(bare)));
  line('ratio sandbox / bare', `${coldRatio.toFixed(2)}×`, 'goal ≤ 1.2×');
  console.log(`    sandbox samples: ${sandboxed.map(ms).join(', ')}`);
  console.log(`    bare samples:    ${bare.map(ms).join(', ')}`);
  console.log('\n  Warm Python call');
  line(`1+1, whole call (median of ${WARM_RUNS}, p90 ${ms(p90(pyWarm))})`, ms(median(pyWarm)), 'goal ≤ 5 ms');
  line('of which inside the sandbox page (worker round trip)', ms(median(pyInner)));
  }

  // --- 1,000 files -----------------------------------------------------------
  if (section('files')) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-bench-'));
  const root = path.join(dir, 'bench');
  let total = 0;
  for (let i = 0; i < FILES; i++) {
    const sub = path.join(root, `dir${String(Math.floor(i / 100)).padStart(2, '0')}`);
    fs.mkdirSync(sub, { recursive: true });
    const text = `file ${i}\n${'lorem ipsum dolor sit amet '.repeat(40)}\n${i === 777 ? 'the needle is here\n' : ''}`;
    fs.writeFileSync(path.join(sub, `f${String(i).padStart(4, '0')}.txt`), text);
    total += Buffer.byteLength(text);
  }
  const { context, page } = await freshPage({ withoutPickers: true });
  await page.getByRole('link', { name: 'Settings' }).click();
  const chooser = page.waitForEvent('filechooser');
  const t0 = Date.now();
  await page.getByRole('button', { name: 'Grant a folder…' }).click();
  await (await chooser).setFiles(root);
  await page.getByTestId('files-notice').waitFor({ timeout: 300_000 });
  const granted = Date.now() - t0;
  await page.getByRole('link', { name: 'Chat' }).click();
  const list = await run(page, 'list_files', { path: 'bench' });
  const search = await run(page, 'search_files', { query: 'needle', path: 'bench' });
  const one = await run(page, 'read_file', { path: 'bench/dir07/f0777.txt' });
  // Python warm first, so the figure is the files' own cost.
  await run(page, 'run_python', { code: '1+1' });
  const handed = await run(page, 'run_python', { code: "import os\nsum(len(fs) for _, _, fs in os.walk('/mnt/data/bench'))", files: ['bench'] });
  const handedJs = await run(page, 'run_javascript', { code: 'listFiles().length', files: ['bench'] });
  await context.close();
  fs.rmSync(dir, { recursive: true, force: true });
  for (const [name, value] of [
    ['1,000 files: grant (copy into the private file system, wall clock)', granted],
    ['1,000 files: list_files, recursive', list.result.duration_ms],
    ['1,000 files: search_files across all', search.result.duration_ms],
    ['1,000 files: read_file of one', one.result.duration_ms],
    ['1,000 files: warm run_python handed all of them', handed.result.duration_ms],
    ['1,000 files: run_javascript handed all of them', handedJs.result.duration_ms],
  ]) figure({ figure: name, value, unit: 'ms', detail: `${(total / 1e6).toFixed(2)} MB in 10 folders` });
  console.log(`\n  1,000 files (${(total / 1e6).toFixed(2)} MB in 10 folders), granted through <input webkitdirectory>`);
  line('grant: copy into the private file system (wall clock)', ms(granted));
  line('list_files, recursive with sizes', ms(list.result.duration_ms));
  line('search_files across all 1,000 (reads every file)', ms(search.result.duration_ms));
  line('read_file of one file', ms(one.result.duration_ms));
  line('run_python (warm) handed all 1,000: read, copy in, count', ms(handed.result.duration_ms));
  line('  of which inside the sandbox page', ms(report(handed).run_ms));
  line('run_javascript handed all 1,000: read, hand over, count', ms(handedJs.result.duration_ms));
  line('  of which inside the sandbox page', ms(report(handedJs).run_ms));
  console.log(`    search found: ${search.result.content[0].text.split('\n')[1]}`);
  }
} finally {
  await browser.close();
  server.kill();
}
