// The model in the tab against native llama.cpp and against wllama 3.13.0
// (what the app ran before Hearth built its own llama.cpp), measured in one
// run on this machine, in turns, on the same GGUF files with the same
// thread counts and the same prompt. Prints figures; asserts nothing.
//
//   Files: the test model (SmolLM2-135M-Instruct) as Q4_0, Q8_0 and Q4_K_M,
//   converted by `cargo xtask bench` with llama.cpp's quantize.
//   Threads: 1 and 2 (when the machine has two cores).
//   Prompt: PP random token ids, then TG tokens generated, as llama-bench
//   measures (the same ids everywhere).
//
//   Native: llama.cpp's own `llama-bench` built from the same source
//   (HEARTH_LLAMA_BENCH), `-p PP -n TG -r RUNS`: its average tokens/s.
//   The tab, the same way: the engine's `bench` request (PP ids in one
//   batch, then TG single-token decodes, from an empty cache), median of
//   RUNS after a warm-up; and a real completion through the engine's
//   request path (sampling, streaming, the worker's messages) with the
//   prompt as ids, greedy and never stopping early, which is what wllama
//   is measured with.
//   wllama: its `createCompletion` with the same ids, greedy, `ignore_eos`,
//   the prompt not cached: llama.cpp's own timings, median of RUNS after
//   a warm-up.
//   Also: the model's load from the private file system (the tab and
//   wllama) and the page's memory with the model loaded
//   (performance.measureUserAgentSpecificMemory counts the page and its
//   workers).
//
// The last lines are the figures for the bench table (`BENCH {json}`).
import { chromium } from 'playwright-core';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { chromiumLaunchOptions, hearthBin, hearthDist, repoRoot } from '../support/env.mjs';
import { freePort } from '../support/mcp.mjs';
import { figure, median, ratio } from './figures.mjs';

const MODELS = process.env.HEARTH_BENCH_MODELS || path.join(repoRoot, '.test-fixtures', 'models');
const LLAMA_BENCH = process.env.HEARTH_LLAMA_BENCH;
const WLLAMA = process.env.HEARTH_WLLAMA_DIR || path.join(repoRoot, 'target', 'bench', 'wllama');
const RUNS = Number(process.env.HEARTH_BENCH_RUNS || 3);
const PP = Number(process.env.HEARTH_BENCH_PP || 128);
const TG = Number(process.env.HEARTH_BENCH_TG || 64);
const CONTEXT = 1024;
const QUANTS = (process.env.HEARTH_BENCH_QUANTS || 'Q4_0,Q8_0,Q4_K_M').split(',');

const fileOf = (quant) => path.join(MODELS, `SmolLM2-135M-Instruct.${quant}.gguf`);
for (const q of QUANTS) {
  if (!fs.existsSync(fileOf(q))) throw new Error(`${fileOf(q)} is missing: cargo xtask bench converts the test model`);
}
if (!LLAMA_BENCH || !fs.existsSync(LLAMA_BENCH)) throw new Error(`llama-bench is missing (${LLAMA_BENCH}): cargo xtask bench builds it`);
for (const f of ['index.js', 'wllama.wasm']) {
  if (!fs.existsSync(path.join(WLLAMA, f))) throw new Error(`${path.join(WLLAMA, f)} is missing: cargo xtask bench copies wllama there`);
}

const line = (label, value) => console.log(`  ${label.padEnd(62)} ${value}`);
const tps = (x) => (Number.isFinite(x) ? `${x.toFixed(1)} tok/s` : String(x));

// The same prompt everywhere: PP ids drawn once (not 0, which may be
// special), inside every vocabulary of the test model's files.
let seed = 7;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const PROMPT = Array.from({ length: PP }, () => 100 + Math.floor(rand() * 40000));

/// llama-bench's average tokens/s for prompt processing and generation.
function nativeBench(file, threads) {
  const out = execFileSync(
    LLAMA_BENCH,
    ['-m', file, '-p', String(PP), '-n', String(TG), '-t', String(threads), '-r', String(RUNS), '-o', 'json'],
    { encoding: 'utf8', maxBuffer: 16 << 20, stdio: ['ignore', 'pipe', 'ignore'] },
  );
  const rows = JSON.parse(out);
  const pp = rows.find((r) => r.n_prompt > 0 && r.n_gen === 0);
  const tg = rows.find((r) => r.n_gen > 0 && r.n_prompt === 0);
  return { pp: pp.avg_ts, tg: tg.avg_ts };
}

const port = await freePort();
const server = spawn(hearthBin, ['serve', '--host', '127.0.0.1', '--port', String(port), '--dist', hearthDist], { stdio: 'ignore' });
const base = `http://127.0.0.1:${port}`;
for (let i = 0; i < 100; i++) {
  try {
    if ((await fetch(`${base}/healthz`)).ok) break;
  } catch {
    // not up yet
  }
  await new Promise((r) => setTimeout(r, 100));
}
const browser = await chromium.launch(chromiumLaunchOptions());
const figures = { pp: PP, tg: TG, runs: RUNS, rows: [] };
try {
  // No service worker: it would answer /__bench/ itself, past the route.
  const context = await browser.newContext({ serviceWorkers: 'block' });
  const page = await context.newPage();
  // wllama and the model files, served same-origin from disk for the bench
  // only (the app ships neither).
  await page.route('**/__bench/**', (route) => {
    const rel = new URL(route.request().url()).pathname.replace(/^\/__bench\//, '');
    const [kind, name] = rel.split('/');
    const file = kind === 'wllama' ? path.join(WLLAMA, name) : fileOf(name.replace(/\.gguf$/, ''));
    const type = name.endsWith('.js') ? 'text/javascript' : name.endsWith('.wasm') ? 'application/wasm' : 'application/octet-stream';
    return route.fulfill({ path: file, contentType: type, headers: { 'cross-origin-resource-policy': 'same-origin' } });
  });
  // The model files come from a file host on 127.0.0.1 with CORS, as a
  // model host serves them: a route's body goes to the browser over the
  // DevTools protocol in one message, and a 100 MB one crashes it.
  const models = http.createServer((req, res) => {
    const quant = decodeURIComponent(new URL(req.url, 'http://x').pathname.slice(1)).replace(/\.gguf$/, '');
    if (!QUANTS.includes(quant)) {
      res.writeHead(404);
      res.end();
      return;
    }
    const file = fileOf(quant);
    res.writeHead(200, {
      'content-type': 'application/octet-stream',
      'content-length': String(fs.statSync(file).size),
      'access-control-allow-origin': '*',
    });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise((resolve) => models.listen(0, '127.0.0.1', resolve));
  models.unref();
  const modelHost = `http://127.0.0.1:${models.address().port}`;
  await page.goto(`${base}/#/chat`);
  await page.waitForSelector('body[data-ready]');
  if (!(await page.evaluate(() => self.crossOriginIsolated))) throw new Error('the page is not cross-origin isolated: no threads');
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  figures.cores = cores;
  const threadCounts = [1, 2].filter((t) => t <= Math.max(1, cores));

  await page.evaluate(
    async ({ quants, modelHost }) => {
      const root = await navigator.storage.getDirectory();
      const dir = await root.getDirectoryHandle('models', { create: true });
      for (const q of quants) {
        const response = await fetch(`${modelHost}/${q}.gguf`);
        if (!response.ok) throw new Error(`the model host said ${response.status} for ${q}`);
        const handle = await dir.getFileHandle(`bench-${q}.gguf`, { create: true });
        await response.body.pipeTo(await handle.createWritable());
      }
      // A fresh worker for each file and thread count, ended before wllama
      // runs: a wasm memory never shrinks, so each is measured alone.
      let worker = null;
      let next = 1;
      window.__tabEnd = () => {
        if (worker) worker.terminate();
        worker = null;
      };
      window.__tab = (message) =>
        new Promise((resolve) => {
          if (!worker) worker = new Worker('/tabmodel/worker.js');
          const id = next++;
          const out = { lines: [], loaded: null, done: null };
          const listen = (e) => {
            const m = e.data;
            if (m.id !== id) return;
            if (m.type === 'loaded') out.loaded = m;
            if (m.type === 'line') out.lines.push(JSON.parse(m.line));
            if (m.type === 'done' || m.type === 'unloaded') {
              worker.removeEventListener('message', listen);
              out.done = m;
              resolve(out);
            }
          };
          worker.addEventListener('message', listen);
          worker.postMessage({ ...message, id });
        });
      window.__file = async (q) => (await (await root.getDirectoryHandle('models')).getFileHandle(`bench-${q}.gguf`)).getFile();
      window.__memory = async () => {
        try {
          return (await performance.measureUserAgentSpecificMemory()).bytes;
        } catch (e) {
          return String(e);
        }
      };
    },
    { quants: QUANTS, modelHost },
  );

  const tab = (message) => page.evaluate((m) => window.__tab(m), message);
  const failure = (r) => r.lines.find((l) => l.error);

  // The tab: load (timed), llama-bench's measurement, then completions.
  const tabRun = async (quant, threads) => {
    await page.evaluate(() => window.__tabEnd());
    const load = await tab({ type: 'load', model: `bench-${quant}`, context: CONTEXT, threads });
    if (failure(load)) throw new Error(`the tab did not load ${quant}: ${JSON.stringify(failure(load))}`);
    const memory = await page.evaluate(() => window.__memory());
    const bench = [];
    for (let i = 0; i <= RUNS; i++) {
      const r = await tab({ type: 'bench', model: `bench-${quant}`, context: CONTEXT, threads, pp: PP, tg: TG });
      if (failure(r)) throw new Error(`the tab's bench failed: ${JSON.stringify(failure(r))}`);
      if (i > 0) bench.push(r.done.bench);
    }
    const completions = [];
    for (let i = 0; i <= RUNS; i++) {
      const r = await tab({
        type: 'chat',
        model: `bench-${quant}`,
        context: CONTEXT,
        threads,
        body: { prompt: PROMPT, max_tokens: TG, temperature: 0, ignore_eos: true },
      });
      if (failure(r)) throw new Error(`the tab's completion failed: ${JSON.stringify(failure(r))}`);
      if (i > 0) completions.push(r.lines.at(-1).timings);
    }
    return {
      load_ms: load.loaded.ms,
      memory,
      pp: median(bench.map((b) => (PP * 1000) / b.pp_ms)),
      tg: median(bench.map((b) => (TG * 1000) / b.tg_ms)),
      completion_pp: median(completions.map((t) => t.prompt_per_second)),
      completion_tg: median(completions.map((t) => t.predicted_per_second)),
    };
  };

  // wllama 3.13.0 in the same page, on the same stored file.
  const wllamaRun = (quant, threads) =>
    page.evaluate(
      async ({ quant, threads, context, prompt, tg, runs }) => {
        const { Wllama } = await import('/__bench/wllama/index.js');
        const quiet = { debug() {}, log() {}, warn() {}, error() {} };
        const wllama = new Wllama({ default: '/__bench/wllama/wllama.wasm' }, { logger: quiet, suppressNativeLog: true });
        wllama.setCompat(null);
        const file = await window.__file(quant);
        const started = performance.now();
        await wllama.loadModel([file], { n_ctx: context, n_threads: threads, n_parallel: 1, n_gpu_layers: 0 });
        const load_ms = performance.now() - started;
        const memory = await window.__memory();
        const timings = [];
        for (let i = 0; i <= runs; i++) {
          const r = await wllama.createCompletion({
            prompt,
            max_tokens: tg,
            temperature: 0,
            ignore_eos: true,
            cache_prompt: false,
          });
          if (i > 0) timings.push(r.timings);
        }
        await wllama.exit();
        const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
        return {
          load_ms,
          memory,
          threads: wllama.getNumThreads ? wllama.getNumThreads() : threads,
          pp: med(timings.map((t) => t.prompt_per_second)),
          tg: med(timings.map((t) => t.predicted_per_second)),
        };
      },
      { quant, threads, context: CONTEXT, prompt: PROMPT, tg: TG, runs: RUNS },
    );

  for (const quant of QUANTS) {
    for (const threads of threadCounts) {
      // In turns, so all three meet the same machine load.
      const t = await tabRun(quant, threads);
      await page.evaluate(() => window.__tabEnd());
      const n = nativeBench(fileOf(quant), threads);
      let w;
      try {
        w = await wllamaRun(quant, threads);
      } catch (e) {
        w = { error: String(e.message || e).split('\n')[0] };
      }
      const row = { quant, threads, tab: t, native: n, wllama: w };
      figures.rows.push(row);
      console.log(`  ${quant}, ${threads} thread${threads === 1 ? '' : 's'}:`);
      line('  prompt processing, tab / native (llama-bench)', `${tps(t.pp)} / ${tps(n.pp)} = ${(t.pp / n.pp).toFixed(2)}x`);
      line('  generation, tab / native (llama-bench)', `${tps(t.tg)} / ${tps(n.tg)} = ${(t.tg / n.tg).toFixed(2)}x`);
      line('  completion prompt, tab / wllama', `${tps(t.completion_pp)} / ${tps(w.pp)}`);
      line('  completion generation, tab / wllama', `${tps(t.completion_tg)} / ${tps(w.tg)}`);
      line('  load from the private file system, tab / wllama', `${(t.load_ms / 1000).toFixed(2)} s / ${w.load_ms ? (w.load_ms / 1000).toFixed(2) : '?'} s`);
      line('  page memory with the model loaded, tab / wllama', `${(t.memory / 1e6).toFixed(0)} MB / ${typeof w.memory === 'number' ? (w.memory / 1e6).toFixed(0) : w.memory} MB`);
      if (w.error) line('  wllama failed', w.error);
    }
  }
  console.log(`tabmodel-figures ${JSON.stringify(figures)}`);

  // The figures for `cargo xtask bench`'s table. The goal figures are the
  // Q4_0 ones at each thread count: the tab against native llama.cpp.
  for (const r of figures.rows) {
    const label = `${r.quant}, ${r.threads} thread${r.threads === 1 ? '' : 's'}`;
    const detail = `SmolLM2-135M ${label}; ${PP} prompt ids, ${TG} generated; median of ${RUNS} (llama-bench: average)`;
    const goal = r.quant === 'Q4_0' ? { min: 0.5 } : undefined;
    const tabPp = { figure: `in-tab engine: prompt processing (${label})`, value: r.tab.pp };
    const natPp = { figure: `native llama-bench: prompt processing (${label})`, value: r.native.pp };
    const tabTg = { figure: `in-tab engine: generation (${label})`, value: r.tab.tg };
    const natTg = { figure: `native llama-bench: generation (${label})`, value: r.native.tg };
    for (const f of [tabPp, natPp, tabTg, natTg]) figure({ ...f, unit: 'tok/s', detail });
    ratio(`in-tab prompt processing vs native (${label})`, tabPp, natPp, goal);
    ratio(`in-tab generation vs native (${label})`, tabTg, natTg, goal);
    const compPp = { figure: `in-tab completion: prompt (${label})`, value: r.tab.completion_pp };
    const compTg = { figure: `in-tab completion: generation (${label})`, value: r.tab.completion_tg };
    figure({ ...compPp, unit: 'tok/s', detail: 'through the worker and sampler, greedy' });
    figure({ ...compTg, unit: 'tok/s', detail: 'through the worker and sampler, greedy' });
    if (Number.isFinite(r.wllama.pp) && Number.isFinite(r.wllama.tg)) {
      const wPp = { figure: `wllama 3.13.0 completion: prompt (${label})`, value: r.wllama.pp };
      const wTg = { figure: `wllama 3.13.0 completion: generation (${label})`, value: r.wllama.tg };
      figure({ ...wPp, unit: 'tok/s', detail: `${r.wllama.threads} threads, 64-bit build` });
      figure({ ...wTg, unit: 'tok/s', detail: `${r.wllama.threads} threads, 64-bit build` });
      ratio(`in-tab completion prompt vs wllama (${label})`, compPp, wPp);
      ratio(`in-tab completion generation vs wllama (${label})`, compTg, wTg);
      figure({ figure: `wllama 3.13.0: load from the private file system (${label})`, value: r.wllama.load_ms, unit: 'ms' });
      if (typeof r.wllama.memory === 'number') {
        figure({ figure: `wllama 3.13.0: page memory with the model loaded (${label})`, value: r.wllama.memory / 1e6, unit: 'MB' });
      }
    }
    figure({ figure: `in-tab engine: load from the private file system (${label})`, value: r.tab.load_ms, unit: 'ms' });
    if (typeof r.tab.memory === 'number') {
      figure({ figure: `in-tab engine: page memory with the model loaded (${label})`, value: r.tab.memory / 1e6, unit: 'MB' });
    }
  }
} finally {
  await browser.close();
  server.kill();
}
