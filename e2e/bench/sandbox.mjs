// Sandbox and file benchmarks in headless Chromium against `hearth serve`.
// Prints figures; asserts nothing. Durations are the call path's own
// `duration_ms` from the activity log (the whole call: permission hooks,
// input checks, the sandbox round trip, output checks), read back from
// IndexedDB.
//
//   JS round trip for 1+1: cold (first run in a fresh profile, which starts
//   the sandbox) and warm, against its anchors in the same run: a bare
//   Worker's postMessage round trip, a bare Worker made from a blob on the
//   app's origin for each run (handed the same code, its answer posted
//   back, then terminated: the sandbox runs each snippet in a fresh
//   Worker), and a bare IndexedDB put until it commits. The warm calls are
//   also timed as the person sees them, from the Enter that sends the
//   command until its result card is in the document, and split into
//   spans (see `traceCalls`).
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

async function freshPage({ withoutPickers = false, trace = false } = {}) {
  const context = await browser.newContext();
  if (trace) await context.addInitScript(traceCalls);
  if (withoutPickers) {
    await context.addInitScript(() => { delete window.showDirectoryPicker; delete window.showOpenFilePicker; });
  }
  const page = await context.newPage();
  await page.goto(`${base}/#/chat`);
  await page.waitForSelector('body[data-ready]');
  return { context, page };
}

/// Where a command's time goes, stamped in the app's own page (never in
/// the sandbox frame) by wrapping the browser APIs the call path uses, so
/// the app is measured as built: the Enter that sends it (a capture
/// listener, before the app's own), the run request posted to the sandbox,
/// the sandbox's result arriving, the Activity record's put, that
/// transaction's commit, and the result card entering the document.
function traceCalls() {
  if (self.origin === 'null' || window.parent !== window) return;
  const calls = [];
  window.__hearthTrace = calls;
  let cur = null;
  const now = () => performance.now();
  document.addEventListener('keydown', (e) => { if (e.key === 'Enter') { cur = { enter: now() }; calls.push(cur); } }, true);
  const post = MessagePort.prototype.postMessage;
  MessagePort.prototype.postMessage = function (message, ...rest) {
    if (cur && !cur.send && message && typeof message.json === 'string' && message.json.includes('"kind":"run"')) cur.send = now();
    return post.call(this, message, ...rest);
  };
  const onmessage = Object.getOwnPropertyDescriptor(MessagePort.prototype, 'onmessage');
  Object.defineProperty(MessagePort.prototype, 'onmessage', {
    configurable: true,
    enumerable: onmessage.enumerable,
    get() { return onmessage.get.call(this); },
    set(handler) {
      const wrapped = typeof handler !== 'function' ? handler : function (e) {
        const c = cur;
        if (c && !c.reply && e.data && typeof e.data.json === 'string' && e.data.json.includes('"kind":"result"')) c.reply = now();
        return handler.call(this, e);
      };
      onmessage.set.call(this, wrapped);
    },
  });
  const put = IDBObjectStore.prototype.put;
  IDBObjectStore.prototype.put = function (...args) {
    const c = cur;
    if (c && !c.put && this.name === 'activity') {
      c.put = now();
      this.transaction.addEventListener('complete', () => { c.commit = now(); });
    }
    return put.apply(this, args);
  };
  const isCard = (n) => n.nodeType === 1 && (n.matches('.result-card') || n.querySelector('.result-card'));
  document.addEventListener('DOMContentLoaded', () => {
    new MutationObserver((records) => {
      const c = cur;
      if (!c || c.card) return;
      if (records.some((r) => [...r.addedNodes].some(isCard))) c.card = now();
    }).observe(document.body, { childList: true, subtree: true });
  });
}

/// The traced calls since the last read, each with its spans in ms.
async function tracedCalls(page) {
  return page.evaluate(() => window.__hearthTrace.splice(0).map((c) => ({
    total: c.card - c.enter,
    before: c.send - c.enter,
    sandbox: c.reply - c.send,
    afterRun: c.put - c.reply,
    commit: c.commit - c.put,
    render: c.card - c.commit,
  })));
}

/// Prints and reports the median of each span of `calls`.
function breakdown(label, calls, inside) {
  const of = (k) => median(calls.map((c) => c[k]).filter(Number.isFinite));
  const spans = [
    ['Enter to the run request posted (composer, lookup, checks, permission)', 'before'],
    ['run request to result back from the sandbox frame', 'sandbox'],
    ['result back to the Activity record put (output checks, record)', 'afterRun'],
    ['the Activity transaction, put to commit', 'commit'],
    ['commit to the result card in the document', 'render'],
  ];
  console.log(`\n  ${label}: where the milliseconds go (medians of ${calls.length})`);
  line('Enter to result card', ms(of('total')));
  for (const [name, k] of spans) {
    line(`  ${name}`, ms(of(k)));
    figure({ figure: `${label}: ${name}`, value: of(k), unit: 'ms', detail: `median of ${calls.length}` });
  }
  line('  of the sandbox span, inside the sandbox page', ms(inside));
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
  let warmTrace = [];
  for (let i = 0; i < COLD_TRIALS; i++) {
    // After the app has idled a moment, its sandbox has started itself.
    const idle = await freshPage();
    await idle.page.waitForTimeout(3000);
    prestarted.push((await run(idle.page, 'run_javascript', { code: '1+1' })).result.duration_ms);
    await idle.context.close();
    const { context, page } = await freshPage({ trace: i === 0 });
    cold.push((await run(page, 'run_javascript', { code: '1+1' })).result.duration_ms);
    if (i === 0) {
      await tracedCalls(page);
      for (let j = 0; j < WARM_RUNS; j++) {
        const r = await run(page, 'run_javascript', { code: '1+1' });
        warm.push(r.result.duration_ms);
        warmInner.push(report(r).run_ms);
      }
      warmTrace = await tracedCalls(page);
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
    const pause = () => new Promise((ok) => setTimeout(ok, 40));
    const fresh = [];
    for (let i = 0; i < n + 5; i++) { await pause(); fresh.push(await once()); }
    // And a warm Worker's postMessage alone, for scale.
    const w = new Worker(url);
    const ping = () => new Promise((resolve) => { const t0 = performance.now(); w.onmessage = () => resolve(performance.now() - t0); w.postMessage('1+1'); });
    const warmPing = [];
    for (let i = 0; i < n + 5; i++) { await pause(); warmPing.push(await ping()); }
    w.terminate();
    // And a bare IndexedDB put of a record like a call's, until it commits.
    await new Promise((ok) => { const d = indexedDB.deleteDatabase('bench-bare-put'); d.onsuccess = ok; d.onerror = ok; });
    const db = await new Promise((ok, err) => {
      const o = indexedDB.open('bench-bare-put', 1);
      o.onupgradeneeded = () => o.result.createObjectStore('activity', { keyPath: 'id' });
      o.onsuccess = () => ok(o.result);
      o.onerror = () => err(o.error);
    });
    const put = (i) => new Promise((ok, err) => {
      const tx = db.transaction('activity', 'readwrite');
      tx.objectStore('activity').put({ id: `call-${i}`, skill: 'run_javascript', arguments: { code: '1+1' },
        result: { status: 'completed', content: [{ type: 'text', text: '2' }], started_at_ms: Date.now(), duration_ms: 1 } });
      tx.oncomplete = ok;
      tx.onerror = () => err(tx.error);
    });
    const puts = [];
    for (let i = 0; i < n + 5; i++) { await pause(); const t0 = performance.now(); await put(i); puts.push(performance.now() - t0); }
    db.close();
    return { fresh: fresh.slice(5), warmPing: warmPing.slice(5), puts: puts.slice(5) };
  }, WARM_RUNS);
  await bare.context.close();
  const anchor = { figure: 'bare Worker: new Worker, postMessage 1+1, answer, terminate', value: median(bareRuns.fresh) };
  figure({ ...anchor, unit: 'ms', detail: `median of ${WARM_RUNS}, p90 ${ms(p90(bareRuns.fresh))}` });
  const ping = { figure: 'bare Worker: postMessage round trip to a running Worker', value: median(bareRuns.warmPing) };
  figure({ ...ping, unit: 'ms', detail: `median of ${WARM_RUNS}, 40 ms apart` });
  const bareput = { figure: 'bare IndexedDB put, committed (sandbox page)', value: median(bareRuns.puts) };
  figure({ ...bareput, unit: 'ms', detail: `median of ${WARM_RUNS}, one readwrite transaction each` });
  const warmJs = { figure: 'warm JS round trip for 1+1 (the call\'s duration_ms)', value: median(warm) };
  figure({ ...warmJs, unit: 'ms', detail: `median of ${WARM_RUNS}, p90 ${ms(p90(warm))}; ${ms(median(warmInner))} inside the sandbox page` });
  const warmShown = warmTrace.map((c) => c.total);
  const shown = { figure: 'warm JS 1+1, Enter to result card (log committed)', value: median(warmShown) };
  figure({ ...shown, unit: 'ms', goal: { max: 5 }, detail: `median of ${warmShown.length}, p90 ${ms(p90(warmShown))}` });
  ratio('warm JS round trip vs bare Worker postMessage', shown, ping, { max: 3 });
  ratio('warm JS round trip vs bare Worker made per run', shown, anchor, { max: 3 });
  const pathOnly = median(warmTrace.map((c) => c.total - c.sandbox));
  figure({ figure: 'warm JS call path, Enter to card less the sandbox round trip', value: pathOnly, unit: 'ms', detail: 'median over calls of (Enter to card) minus (run request to result back)' });
  figure({ figure: 'warm JS call path beyond one IndexedDB commit', value: pathOnly - bareput.value, unit: 'ms', goal: { max: 1 }, detail: 'the line above minus the bare put, same run' });
  figure({ figure: 'cold JS: first run, sandbox started by it', value: median(cold), unit: 'ms', goal: { max: 50 }, detail: `median of ${COLD_TRIALS}` });
  figure({ figure: 'cold JS: first run, sandbox pre-started at idle', value: median(prestarted), unit: 'ms', goal: { max: 50 }, detail: `median of ${COLD_TRIALS}` });
  console.log('\n  JavaScript round trip for 1+1');
  line(`bare Worker anchor (median of ${WARM_RUNS})`, ms(anchor.value));
  line(`cold: first run, sandbox started by it (median of ${COLD_TRIALS})`, ms(median(cold)), 'goal ≤ 50 ms');
  line(`cold: first run, sandbox pre-started at idle (median of ${COLD_TRIALS})`, ms(median(prestarted)), 'goal ≤ 50 ms');
  line(`bare Worker postMessage to a running Worker (median of ${WARM_RUNS})`, ms(ping.value));
  line(`bare IndexedDB put, committed (median of ${WARM_RUNS})`, ms(bareput.value));
  line(`warm: Enter to result card (p90 ${ms(p90(warmShown))})`, ms(shown.value), 'goal ≤ 5 ms');
  line(`warm: the call's duration_ms (p90 ${ms(p90(warm))})`, ms(median(warm)));
  line('warm: of which inside the sandbox page (worker round trip)', ms(median(warmInner)));
  console.log(`    cold samples: ${cold.map(ms).join(', ')}`);
  breakdown('warm JS 1+1', warmTrace, median(warmInner));
  }

  // --- Python cold start: sandbox against bare Pyodide --------------------
  if (section('python')) {
  const sandboxed = [];
  const bare = [];
  let pyWarm = [];
  let pyInner = [];
  let pyTrace = [];
  for (let i = 0; i < COLD_TRIALS; i++) {
    {
      const { context, page } = await freshPage({ trace: i === 0 });
      const r = await run(page, 'run_python', { code: '1+1' });
      sandboxed.push(r.result.duration_ms);
      if (i === 0) {
        await tracedCalls(page);
        for (let j = 0; j < WARM_RUNS; j++) {
          const w = await run(page, 'run_python', { code: '1+1' });
          pyWarm.push(w.result.duration_ms);
          pyInner.push(report(w).run_ms);
        }
        pyTrace = await tracedCalls(page);
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
  figure({ figure: 'warm Python call for 1+1 (the call\'s duration_ms)', value: median(pyWarm), unit: 'ms', detail: `median of ${WARM_RUNS}, p90 ${ms(p90(pyWarm))}; ${ms(median(pyInner))} inside the sandbox page` });
  const pyShown = pyTrace.map((c) => c.total);
  figure({ figure: 'warm Python 1+1, Enter to result card (log committed)', value: median(pyShown), unit: 'ms', goal: { max: 5 }, detail: `median of ${pyShown.length}, p90 ${ms(p90(pyShown))}` });
  const coldRatio = median(sandboxed) / median(bare);
  console.log('\n  Python cold start (fresh profile each: fetch, compile, start, run 1+1)');
  line(`in the sandbox, whole first call (median of ${COLD_TRIALS})`, ms(median(sandboxed)));
  line(`bare Pyodide in a module worker, same origin (median of ${COLD_TRIALS})`, ms(median(bare)));
  line('ratio sandbox / bare', `${coldRatio.toFixed(2)}×`, 'goal ≤ 1.2×');
  console.log(`    sandbox samples: ${sandboxed.map(ms).join(', ')}`);
  console.log(`    bare samples:    ${bare.map(ms).join(', ')}`);
  console.log('\n  Warm Python call');
  line(`1+1, Enter to result card (median of ${pyShown.length}, p90 ${ms(p90(pyShown))})`, ms(median(pyShown)), 'goal ≤ 5 ms');
  line(`1+1, the call's duration_ms (median of ${WARM_RUNS}, p90 ${ms(p90(pyWarm))})`, ms(median(pyWarm)));
  line('of which inside the sandbox page (worker round trip)', ms(median(pyInner)));
  breakdown('warm Python 1+1', pyTrace, median(pyInner));
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
