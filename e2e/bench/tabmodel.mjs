// The model in the tab against native llama.cpp, measured in one run on
// this machine. Prints figures; asserts nothing.
//
//   In the tab (headless Chromium, `hearth serve`, the app's own worker
//   and wllama, CPU, multi-threaded): prompt processing and generation
//   tokens/s (llama.cpp's timings, median of the runs), the model's load
//   time from the private file system (median of cold loads), and the
//   tab's memory while it answers (performance.measureUserAgentSpecificMemory,
//   which counts the page and its workers).
//   Native: the same file, messages, context and threads through
//   llama-cpp-python (HEARTH_LLAMA_PYTHON is its interpreter).
//   The ratio tab / native for both speeds, against a goal of 0.5x.
//
// The last line is the figures as JSON, for the bench table.
import { chromium } from 'playwright-core';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromiumLaunchOptions, hearthBin, hearthDist, repoRoot } from '../support/env.mjs';
import { freePort } from '../support/mcp.mjs';
import { figure, ratio } from './figures.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const MODEL = process.env.HEARTH_TEST_MODEL || path.join(repoRoot, '.test-fixtures', 'models', 'SmolLM2-135M-Instruct.Q4_1.gguf');
const PYTHON = process.env.HEARTH_LLAMA_PYTHON;
const RUNS = Number(process.env.HEARTH_BENCH_RUNS || 3);
const LOADS = Number(process.env.HEARTH_BENCH_LOADS || 3);
const CONTEXT = 2048;
const MAX_TOKENS = 128;
// About 200 prompt tokens, so prompt processing is measured on a batch.
const MESSAGES = [
  { role: 'system', content: 'You are a helpful assistant. Answer in plain sentences.' },
  {
    role: 'user',
    content:
      'Here are some notes from a trip. We left early on Monday and drove north along the coast for six hours, ' +
      'stopping twice for coffee and once to walk on a long grey beach. On Tuesday it rained all day, so we visited ' +
      'a small museum about fishing boats, then a bakery, then a second bakery because the first had run out of bread. ' +
      'On Wednesday the sun came back and we hiked up a hill with a view over three valleys and a lake. On Thursday we ' +
      'rested, read books and cooked a large dinner with friends we met at the campsite. On Friday we drove home. ' +
      'Please tell me, in a few sentences, what the trip was like and which day sounds best.',
  },
];

if (!fs.existsSync(MODEL)) throw new Error(`${MODEL} is missing: cargo xtask test-model installs it`);

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const line = (label, value, goal = '') => console.log(`  ${label.padEnd(58)} ${value.padStart(14)}${goal ? `   (${goal})` : ''}`);

const port = await freePort();
const server = spawn(hearthBin, ['serve', '--host', '127.0.0.1', '--port', String(port), '--dist', hearthDist], { stdio: 'ignore' });
const base = `http://127.0.0.1:${port}`;
for (let i = 0; i < 100; i++) {
  try { if ((await fetch(`${base}/healthz`)).ok) break; } catch { /* not up yet */ }
  await new Promise((r) => setTimeout(r, 100));
}
const browser = await chromium.launch(chromiumLaunchOptions());
const figures = {};
try {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${base}/#/settings`);
  await page.waitForSelector('body[data-ready]');
  // The tab runs with the thread count the app picks (the worker's
  // default: one core left for the page), so the figure is what a person
  // gets; the native anchor then runs with the same count.
  const threads = undefined;
  if (!(await page.evaluate(() => self.crossOriginIsolated))) throw new Error('the page is not cross-origin isolated: no threads');

  // Store the model the way a person does: picked in the provider settings.
  const panel = page.locator('.provider-panel');
  await panel.getByLabel('Provider').selectOption('in-tab');
  const copyStart = Date.now();
  await panel.getByLabel('Model file', { exact: true }).setInputFiles(MODEL);
  await panel.locator('.tab-model').waitFor({ timeout: 300_000 });
  figures.store_ms = Date.now() - copyStart;
  const modelId = await panel.locator('.tab-model').getAttribute('data-model');

  // Drive the app's worker directly, with the body the app would send.
  await page.evaluate(() => {
    window.__bench = {
      worker: new Worker('/tabmodel/worker.js', { type: 'module' }),
      next: 1,
      run(message) {
        const id = this.next++;
        return new Promise((resolve) => {
          const out = { lines: [], loaded: null, memory: null };
          let measuring = null;
          const listener = (e) => {
            const m = e.data;
            if (m.id !== id) return;
            if (m.type === 'loaded') out.loaded = m;
            if (m.type === 'line') {
              out.lines.push(m.line);
              // Memory while it answers: once, a few tokens in.
              if (message.measureMemory && out.lines.length === 8 && !measuring) {
                measuring = performance.measureUserAgentSpecificMemory().then((r) => (out.memory = r.bytes), (e) => (out.memory = String(e)));
              }
            }
            if (m.type === 'done') {
              this.worker.removeEventListener('message', listener);
              Promise.resolve(measuring).then(() => resolve(out));
            }
          };
          this.worker.addEventListener('message', listener);
          this.worker.postMessage({ ...message, id });
        });
      },
      unload() {
        return new Promise((resolve) => {
          const id = this.next++;
          const listener = (e) => { if (e.data.id === id) { this.worker.removeEventListener('message', listener); resolve(); } };
          this.worker.addEventListener('message', listener);
          this.worker.postMessage({ type: 'unload', id });
        });
      },
    };
  });

  // Load time from the private file system, cold each time (unloaded
  // between); the first also fetches the runtime.
  const loads = [];
  for (let i = 0; i < LOADS; i++) {
    await page.evaluate(() => window.__bench.unload());
    const r = await page.evaluate(
      ({ model, context, threads }) => window.__bench.run({ type: 'load', model, context, threads }),
      { model: modelId, context: CONTEXT, threads },
    );
    if (!r.loaded) throw new Error(`the model did not load: ${r.lines.join('\n')}`);
    loads.push(r.loaded.ms);
    figures.tab_threads = r.loaded.threads;
  }
  figures.load_ms = median(loads);

  // The first answer after a load runs partly on V8's baseline wasm code
  // until the hot functions are optimised; it is measured apart, and the
  // runs after it give the steady speed the ratio is taken on.
  const prompt = [];
  const generate = [];
  let last;
  for (let i = -1; i < RUNS; i++) {
    const r = await page.evaluate(
      ({ model, context, threads, messages, maxTokens, measure, run }) =>
        window.__bench.run({
          type: 'chat',
          model,
          context,
          threads,
          measureMemory: measure,
          // A different start each run, so no cached prompt is reused.
          body: {
            messages: messages.map((m, j) => (j === 0 ? { ...m, content: `Run ${run}. ${m.content}` } : m)),
            max_tokens: maxTokens,
            temperature: 0,
            timings_per_token: true,
            stream: true,
          },
        }),
      { model: modelId, context: CONTEXT, threads, messages: MESSAGES, maxTokens: MAX_TOKENS, measure: i === 0, run: i },
    );
    const chunks = r.lines.map((l) => JSON.parse(l));
    const failed = chunks.find((c) => c.error);
    if (failed) throw new Error(`the model failed: ${JSON.stringify(failed.error)}`);
    last = chunks.at(-1).timings;
    if (i < 0) {
      figures.tab_first_prompt_per_second = last.prompt_per_second;
      figures.tab_first_output_per_second = last.predicted_per_second;
      continue;
    }
    prompt.push(last.prompt_per_second);
    generate.push(last.predicted_per_second);
    if (r.memory !== null) figures.tab_memory_bytes = r.memory;
  }
  figures.tab_prompt_tokens = last.prompt_n;
  figures.tab_prompt_per_second = median(prompt);
  figures.tab_output_tokens = last.predicted_n;
  figures.tab_output_per_second = median(generate);
  await context.close();

  // The native anchor: same file, messages, context and threads.
  if (!PYTHON) throw new Error('HEARTH_LLAMA_PYTHON is not set: cargo xtask bench installs llama-cpp-python');
  const native = JSON.parse(
    execFileSync(PYTHON, [path.join(here, 'tabmodel_native.py'), JSON.stringify({
      model: MODEL, context: CONTEXT, threads: figures.tab_threads, runs: RUNS, max_tokens: MAX_TOKENS, messages: MESSAGES,
    })], { encoding: 'utf8', maxBuffer: 1 << 20 }).trim().split('\n').at(-1),
  );
  figures.native_load_ms = native.load_ms;
  figures.native_prompt_tokens = native.prompt_tokens;
  figures.native_prompt_per_second = native.prompt_per_second;
  figures.native_output_per_second = native.output_per_second;
  figures.prompt_ratio = figures.tab_prompt_per_second / native.prompt_per_second;
  figures.output_ratio = figures.tab_output_per_second / native.output_per_second;

  const tps = (x) => `${x.toFixed(1)} tok/s`;
  console.log(`  model: ${path.basename(MODEL)}, context ${CONTEXT}, ${MAX_TOKENS} tokens out, ${figures.tab_threads} threads, median of ${RUNS}`);
  line('store the picked file in the private file system', `${(figures.store_ms / 1000).toFixed(1)} s`);
  line(`load from the private file system (median of ${LOADS})`, `${(figures.load_ms / 1000).toFixed(2)} s`);
  line(`prompt processing in the tab (${figures.tab_prompt_tokens} tokens)`, tps(figures.tab_prompt_per_second));
  line(`prompt processing, native llama.cpp (${native.prompt_tokens} tokens)`, tps(native.prompt_per_second));
  line('prompt processing ratio tab / native', `${figures.prompt_ratio.toFixed(2)}x`, 'goal: >= 0.5x');
  line('generation in the tab', tps(figures.tab_output_per_second));
  line('first answer after a load: prompt / generation', `${tps(figures.tab_first_prompt_per_second)} / ${tps(figures.tab_first_output_per_second)}`);
  line('generation, native llama.cpp', tps(native.output_per_second));
  line('generation ratio tab / native', `${figures.output_ratio.toFixed(2)}x`, 'goal: >= 0.5x');
  line('native load time', `${(native.load_ms / 1000).toFixed(2)} s`);
  line('the tab\'s memory while answering', typeof figures.tab_memory_bytes === 'number' ? `${(figures.tab_memory_bytes / 1e6).toFixed(0)} MB` : String(figures.tab_memory_bytes));
  console.log(`tabmodel-figures ${JSON.stringify(figures)}`);
  // The figures for `cargo xtask bench`'s table.
  const detail = `SmolLM2-135M Q4_1, ${figures.tab_threads} threads, median of ${RUNS}`;
  const tabPrompt = { figure: 'in-tab model: prompt processing', value: figures.tab_prompt_per_second };
  const nativePrompt = { figure: 'native llama.cpp: prompt processing', value: native.prompt_per_second };
  const tabOut = { figure: 'in-tab model: generation', value: figures.tab_output_per_second };
  const nativeOut = { figure: 'native llama.cpp: generation', value: native.output_per_second };
  for (const f of [tabPrompt, nativePrompt, tabOut, nativeOut]) figure({ ...f, unit: 'tok/s', detail });
  ratio('in-tab model: prompt processing vs native', tabPrompt, nativePrompt, { min: 0.5 });
  ratio('in-tab model: generation vs native', tabOut, nativeOut, { min: 0.5 });
  figure({ figure: 'in-tab model: generation, first answer after a load', value: figures.tab_first_output_per_second, unit: 'tok/s', detail: 'before V8 has optimised the hot wasm' });
  figure({ figure: 'in-tab model: load from the private file system', value: figures.load_ms, unit: 'ms', detail: `median of ${LOADS} cold loads` });
  if (typeof figures.tab_memory_bytes === 'number') {
    figure({ figure: 'in-tab model: the tab\'s memory while answering', value: figures.tab_memory_bytes / 1e6, unit: 'MB' });
  }
} finally {
  await browser.close();
  server.kill();
}
