// Sandbox and file benchmarks in headless Chromium. Prints figures;
// asserts nothing. Durations are the call path's own `duration_ms` from the
// activity log (the whole call: permission hooks, input checks, the sandbox
// round trip, output checks), read back from IndexedDB.
//
// The sandbox figures are taken on two hosts, `hearth serve` and a plain
// static server (`python3 -m http.server`, no special headers), and for one
// or more builds measured side by side in the same run, trial by trial, so
// a before/after comparison shares the machine's conditions:
//
//   JS round trip for 1+1: cold (first run in a fresh profile, which starts
//   the sandbox), cold with the sandbox pre-started at idle, and warm.
//   Builds take turns going first, trial by trial.
//   Python cold start (the whole first call) and the warm 1+1 call, with
//   bare Pyodide in a module worker on the same origin as the anchor.
//   Granting, listing and reading 1,000 files (hearth serve, first build).
//
// HEARTH_BENCH_ONLY=js|python|files runs one section.
// HEARTH_BENCH_HOSTS=serve,static picks the hosts (both by default).
// HEARTH_BENCH_BUILDS='before=/path/dist@/path/hearth;after=dist' compares
// builds (a build's hearth binary defaults to HEARTH_BIN).
import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromiumLaunchOptions, hearthBin, hearthDist } from '../support/env.mjs';
import { freePort } from '../support/mcp.mjs';
import { startStatic } from '../support/static.mjs';

const COLD_TRIALS = Number(process.env.HEARTH_BENCH_COLD || 5);
const WARM_RUNS = Number(process.env.HEARTH_BENCH_WARM || 30);
// Warm runs are spread over the trials, so each build's come from several
// fresh profiles and moments.
const WARM_PER_TRIAL = Math.max(1, Math.ceil(WARM_RUNS / COLD_TRIALS));
const FILES = 1000;
const ONLY = process.env.HEARTH_BENCH_ONLY || '';
const section = (name) => !ONLY || ONLY === name;
const HOSTS = (process.env.HEARTH_BENCH_HOSTS || 'serve,static').split(',').filter(Boolean);
const BUILDS = (process.env.HEARTH_BENCH_BUILDS || `this build=${hearthDist}`).split(';').filter(Boolean).map((spec) => {
  const [label, where] = spec.split('=');
  const [dist, bin] = where.split('@');
  return { label, dist: path.resolve(dist), bin: bin ? path.resolve(bin) : hearthBin };
});

/// Starts `host` for `build`: {base, stop()}.
async function startHost(host, build) {
  if (host === 'static') {
    const s = await startStatic({ dist: build.dist });
    return { base: s.url, stop: s.stop };
  }
  const port = await freePort();
  const server = spawn(build.bin, ['serve', '--host', '127.0.0.1', '--port', String(port), '--dist', build.dist], { stdio: 'ignore' });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    try { if ((await fetch(`${base}/healthz`)).ok) break; } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { base, stop: async () => server.kill() };
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const p90 = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(s.length * 0.9))]; };
const ms = (x) => (x < 10 ? `${x.toFixed(2)} ms` : x < 1000 ? `${x.toFixed(1)} ms` : `${(x / 1000).toFixed(2)} s`);
const line = (label, value, goal = '') => console.log(`  ${label.padEnd(58)} ${value.padStart(12)}${goal ? `   (${goal})` : ''}`);

const browser = await chromium.launch(chromiumLaunchOptions());

async function freshPage({ withoutPickers = false, base } = {}) {
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

/// A figure, or why it could not be taken.
const attempt = async (f) => { try { return await f(); } catch (e) { return { failed: String(e.message || e).split('\n')[0].slice(0, 80) }; } };
const shown = (xs, stat = median) => (xs.failed ? `fails: ${xs.failed}` : xs.length ? ms(stat(xs)) : '—');

/// Prints one row per figure, one column per build, and each later build's
/// ratio to the first.
function table(title, rows) {
  console.log(`\n  ${title}`);
  console.log(`  ${''.padEnd(50)}${BUILDS.map((b) => b.label.padStart(16)).join('')}${BUILDS.length > 1 ? '   ratio' : ''}`);
  for (const [label, per] of rows) {
    const cells = BUILDS.map((b) => shown(per[b.label]).padStart(16)).join('');
    const first = per[BUILDS[0].label];
    const last = per[BUILDS[BUILDS.length - 1].label];
    const ratio = BUILDS.length > 1 && !first.failed && !last.failed && first.length && last.length
      ? `   ${(median(last) / median(first)).toFixed(2)}×` : '';
    console.log(`  ${label.padEnd(50)}${cells}${ratio}`);
  }
}

async function measureSandbox(host) {
  const servers = {};
  for (const b of BUILDS) servers[b.label] = await startHost(host, b);
  const per = () => Object.fromEntries(BUILDS.map((b) => [b.label, []]));
  const cold = per();
  const prestarted = per();
  const warm = per();
  const pyCold = per();
  const pyWarm = per();
  const bare = [];
  const push = (into, label, value) => {
    if (value && value.failed) into[label] = value;
    else if (!into[label].failed) into[label].push(value);
  };
  try {
    for (let i = 0; i < COLD_TRIALS; i++) {
      // Each trial in the other order, so neither build always goes first.
      const order = i % 2 === 0 ? BUILDS : [...BUILDS].reverse();
      for (const b of order) {
        const base = servers[b.label].base;
        if (section('js')) {
          // After the app has idled a moment, its sandbox has started itself.
          push(prestarted, b.label, await attempt(async () => {
            const idle = await freshPage({ base });
            try {
              await idle.page.waitForTimeout(3000);
              return (await run(idle.page, 'run_javascript', { code: '1+1' })).result.duration_ms;
            } finally { await idle.context.close(); }
          }));
          push(cold, b.label, await attempt(async () => {
            const { context, page } = await freshPage({ base });
            try {
              const first = (await run(page, 'run_javascript', { code: '1+1' })).result.duration_ms;
              for (let j = 0; j < WARM_PER_TRIAL; j++) push(warm, b.label, (await run(page, 'run_javascript', { code: '1+1' })).result.duration_ms);
              return first;
            } finally { await context.close(); }
          }));
        }
        if (section('python')) {
          push(pyCold, b.label, await attempt(async () => {
            const { context, page } = await freshPage({ base });
            try {
              const first = (await run(page, 'run_python', { code: '1+1' })).result.duration_ms;
              for (let j = 0; j < WARM_PER_TRIAL; j++) push(pyWarm, b.label, (await run(page, 'run_python', { code: '1+1' })).result.duration_ms);
              return first;
            } finally { await context.close(); }
          }));
        }
      }
      if (section('python')) {
        const { context, page } = await freshPage({ base: servers[BUILDS[0].label].base });
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
  } finally {
    for (const s of Object.values(servers)) await s.stop();
  }
  const name = host === 'static' ? 'a plain static server (python3 -m http.server)' : 'hearth serve';
  if (section('js')) {
    table(`JavaScript round trip for 1+1, under ${name}`, [
      [`cold: sandbox started by the run (median of ${COLD_TRIALS})`, cold],
      [`cold: sandbox pre-started at idle (median of ${COLD_TRIALS})`, prestarted],
      [`warm: median of ${WARM_PER_TRIAL * COLD_TRIALS}`, warm],
    ]);
  }
  if (section('python')) {
    table(`Python, under ${name}`, [
      [`cold: the whole first call (median of ${COLD_TRIALS})`, pyCold],
      [`warm: 1+1, median of ${WARM_PER_TRIAL * COLD_TRIALS}`, pyWarm],
    ]);
    console.log(`  ${`anchor: bare Pyodide in a module worker (median of ${COLD_TRIALS})`.padEnd(50)}${ms(median(bare)).padStart(16)}`);
  }
}

try {
  if (section('js') || section('python')) {
    for (const host of HOSTS) await measureSandbox(host);
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
  const files = await startHost('serve', BUILDS[0]);
  const { context, page } = await freshPage({ withoutPickers: true, base: files.base });
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
  await files.stop();
  fs.rmSync(dir, { recursive: true, force: true });
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
}
