// The model in the tab against native llama.cpp and against wllama 3.13.0
// (what the app ran before Hearth built its own llama.cpp), measured in one
// run on this machine, in turns, on the same GGUF files with the same
// thread counts and the same prompt. Prints figures; asserts nothing.
//
//   Files: the test model (SmolLM2-135M-Instruct) as Q4_0, Q8_0 and Q4_K_M,
//   converted by `cargo xtask bench` with llama.cpp's quantize.
//   Threads: 1 and 2 (when the machine has two cores).
//   HEARTH_BENCH_QUANTS and HEARTH_BENCH_THREADS (comma-separated) pick
//   fewer, for a quick run by hand.
//   Prompt: PP prompt tokens, then TG tokens generated, as llama-bench
//   measures. The completions (the tab's and wllama's) read the same text
//   of PP words, each one token: wllama 3.x takes a raw prompt as text
//   only (an array of ids fails inside it as a JSON type error). Each
//   run's text starts with another word, so no run reads the previous
//   one's prompt from the cache; both report how many tokens they read,
//   and a count other than PP, or a cached token, fails the row.
//
//   Native: llama.cpp's own `llama-bench` built from the same source
//   (HEARTH_LLAMA_BENCH), `-p PP -n TG -r RUNS`: its average tokens/s.
//   The tab, the same way: the engine's `bench` request (PP random ids in
//   one batch, then TG single-token decodes, from an empty cache), median
//   of RUNS after a warm-up; and a real completion through the engine's
//   request path (sampling, streaming, the worker's messages) of the text,
//   greedy and never stopping early, which is what wllama is measured
//   with.
//   wllama: its `createCompletion` of the same text, greedy, `ignore_eos`,
//   the prompt not cached: llama.cpp's own timings, median of RUNS after
//   a warm-up. It runs in a page of its own, closed after each file and
//   thread count whether wllama loaded or not: its worker and its memory
//   go with the page, so no row's memory counts another's.
//   Also: the model's load from the private file system (the tab and
//   wllama) and the page's memory with the model loaded
//   (performance.measureUserAgentSpecificMemory counts the page and its
//   workers). The tab's page is the app's; wllama's is an empty page, so
//   the app's own memory with no model is printed too (a few MB).
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
const THREADS = (process.env.HEARTH_BENCH_THREADS || '1,2').split(',').map(Number);

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

// The completions' text, the same for the tab and wllama: PP words drawn
// once, each one token of the test model's vocabulary with its leading
// space (checked: every run must report PP prompt tokens). Run i starts
// with WORDS[i], so consecutive runs differ at the first token and share
// nothing in the cache.
let seed = 7;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const WORDS = (
  'old lighthouse keeper climbed the narrow stairs every evening at dusk lit great lamp wound clock that turned ' +
  'lens and wrote weather in his log one stormy night late autumn saw a small boat sun star center of our solar ' +
  'system planets travel around it third planet only water river mountain forest village house garden tree bird ' +
  'song light dark cold warm morning day year city road bridge window door table chair book letter'
).split(' ');
if (RUNS + 1 > WORDS.length) throw new Error(`at most ${WORDS.length - 1} runs: each needs its own first word`);
const BODY = Array.from({ length: PP - 1 }, () => WORDS[Math.floor(rand() * WORDS.length)]);
const textPrompt = (run) => [WORDS[run], ...BODY].map((w) => ` ${w}`).join('');

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
  // wllama and the model files, served same-origin from disk to every page
  // of the bench, for the bench only (the app ships neither).
  await context.route('**/__bench/**', (route) => {
    const rel = new URL(route.request().url()).pathname.replace(/^\/__bench\//, '');
    if (rel === 'wllama.html') {
      // wllama's page: empty, of the app's origin (so it reads the stored
      // files) and cross-origin isolated (so wllama has threads). Not the
      // app, which deletes the model files it has not listed.
      return route.fulfill({
        contentType: 'text/html',
        body: '<!doctype html><title>wllama</title>',
        headers: { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' },
      });
    }
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
  const threadCounts = THREADS.filter((t) => t <= Math.max(1, cores));

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

  figures.app_memory = await page.evaluate(() => window.__memory());
  line('page memory of the app with no model loaded', `${(figures.app_memory / 1e6).toFixed(1)} MB`);
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
        body: { prompt: textPrompt(i), max_tokens: TG, temperature: 0, ignore_eos: true },
      });
      if (failure(r)) throw new Error(`the tab's completion failed: ${JSON.stringify(failure(r))}`);
      const t = r.lines.at(-1).timings;
      if (t.prompt_n !== PP || t.cache_n !== 0) {
        throw new Error(`the tab's completion read ${t.prompt_n} prompt tokens with ${t.cache_n} cached, not ${PP} and none`);
      }
      if (i > 0) completions.push(t);
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

  // wllama 3.13.0 on the same stored file, in a page of its own that is
  // closed afterwards, loaded or not: otherwise its worker and memory stay,
  // after a failure too, and count in every later row's memory figure.
  const wllamaRun = async (quant, threads) => {
    const own = await context.newPage();
    try {
      await own.goto(`${base}/__bench/wllama.html`);
      if (!(await own.evaluate(() => self.crossOriginIsolated))) throw new Error("wllama's page is not cross-origin isolated");
      return await own.evaluate(
        async ({ quant, threads, context, prompts, pp, tg }) => {
          const { Wllama } = await import('/__bench/wllama/index.js');
          const quiet = { debug() {}, log() {}, warn() {}, error() {} };
          const wllama = new Wllama({ default: '/__bench/wllama/wllama.wasm' }, { logger: quiet, suppressNativeLog: true });
          // No compat build: it would come from a CDN, and Chromium runs the
          // default build.
          wllama.setCompat(null);
          try {
            const root = await navigator.storage.getDirectory();
            const file = await (await (await root.getDirectoryHandle('models')).getFileHandle(`bench-${quant}.gguf`)).getFile();
            const started = performance.now();
            await wllama.loadModel([file], { n_ctx: context, n_threads: threads, n_parallel: 1, n_gpu_layers: 0 });
            const load_ms = performance.now() - started;
            let memory;
            try {
              memory = (await performance.measureUserAgentSpecificMemory()).bytes;
            } catch (e) {
              memory = String(e);
            }
            const timings = [];
            for (let i = 0; i < prompts.length; i++) {
              const r = await wllama.createCompletion({
                prompt: prompts[i],
                max_tokens: tg,
                temperature: 0,
                ignore_eos: true,
                cache_prompt: false,
              });
              if (r.timings.prompt_n !== pp) throw new Error(`wllama read ${r.timings.prompt_n} prompt tokens, not ${pp}`);
              if (i > 0) timings.push(r.timings);
            }
            const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
            return {
              load_ms,
              memory,
              threads: wllama.getNumThreads ? wllama.getNumThreads() : threads,
              pp: med(timings.map((t) => t.prompt_per_second)),
              tg: med(timings.map((t) => t.predicted_per_second)),
            };
          } finally {
            // Frees the model when it loaded; after a crash wllama may never
            // answer, and closing the page ends it anyway.
            await Promise.race([wllama.exit().catch(() => {}), new Promise((r) => setTimeout(r, 5000))]);
          }
        },
        {
          quant,
          threads,
          context: CONTEXT,
          prompts: Array.from({ length: RUNS + 1 }, (_, i) => textPrompt(i)),
          pp: PP,
          tg: TG,
        },
      );
    } finally {
      await own.close();
    }
  };

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
        figure({
          figure: `wllama 3.13.0: page memory with the model loaded (${label})`,
          value: r.wllama.memory / 1e6,
          unit: 'MB',
          detail: 'an empty page of the same origin, without the app',
        });
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
