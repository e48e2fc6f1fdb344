// The model in the tab against native llama.cpp, measured in one run on
// this machine. Prints figures; asserts nothing.
//
//   In the tab (headless Chromium, `hearth serve`, the app's own worker
//   and wllama, CPU): prompt processing and generation tokens/s
//   (llama.cpp's timings, median of the runs, after a first answer that is
//   reported apart), the model's load time from the private file system
//   (median of cold loads), and the tab's memory while it answers
//   (performance.measureUserAgentSpecificMemory, which counts the page and
//   its workers).
//   Native: the same file, messages, context, threads and flash attention
//   through llama-cpp-python (HEARTH_LLAMA_PYTHON is its interpreter),
//   after a warm-up answer, taking turns with the tab answer by answer so
//   both meet the same machine load.
//   Measured with the app's own choice of threads and build (the figures
//   with the goal: a ratio tab / native of 0.5x for both speeds), then with
//   the other thread count of 1 and 2 and with the other wllama build.
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

// A different start each run, so no cached prompt is reused; the tab and
// native llama.cpp get the same messages for the same run.
const messagesFor = (run) => MESSAGES.map((m, j) => (j === 0 ? { ...m, content: `Run ${run}. ${m.content}` } : m));

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
  // between); the first also fetches the runtime. The app's own choice of
  // threads and build.
  const loads = [];
  let chosen;
  for (let i = 0; i < LOADS; i++) {
    await page.evaluate(() => window.__bench.unload());
    const r = await page.evaluate(
      ({ model, context }) => window.__bench.run({ type: 'load', model, context }),
      { model: modelId, context: CONTEXT },
    );
    if (!r.loaded) throw new Error(`the model did not load: ${r.lines.join('\n')}`);
    loads.push(r.loaded.ms);
    chosen = r.loaded;
  }
  figures.load_ms = median(loads);
  figures.tab_threads = chosen.threads;
  figures.tab_build = chosen.build;
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  figures.cores = cores;

  // What is measured: the app's own choice first (the figures with the
  // goal), then the other thread count of 1 and 2 and the other build, so
  // the table shows what each costs on this machine.
  const otherBuild = chosen.build === 'wasm64' ? 'wasm32' : 'wasm64';
  const configs = [{ threads: chosen.threads, build: chosen.build, app: true }];
  for (const t of [1, 2]) {
    if (t !== chosen.threads && t <= cores) configs.push({ threads: t, build: chosen.build });
  }
  if (await page.evaluate(() => typeof WebAssembly.Suspending === 'function') || otherBuild === 'wasm32') {
    configs.push({ threads: chosen.threads, build: otherBuild });
  }

  // One answer in the tab: llama.cpp's own timings from the last chunk.
  const tabAnswer = async (config, run, measure) => {
    const r = await page.evaluate(
      ({ model, context, threads, build, messages, maxTokens, measure }) =>
        window.__bench.run({
          type: 'chat',
          model,
          context,
          threads,
          build,
          measureMemory: measure,
          body: { messages, max_tokens: maxTokens, temperature: 0, timings_per_token: true, stream: true },
        }),
      { model: modelId, context: CONTEXT, threads: config.threads, build: config.build, messages: messagesFor(run), maxTokens: MAX_TOKENS, measure },
    );
    const chunks = r.lines.map((l) => JSON.parse(l));
    const failed = chunks.find((c) => c.error);
    if (failed) throw new Error(`the model failed: ${JSON.stringify(failed.error)}`);
    return { timings: chunks.at(-1).timings, memory: r.memory };
  };
  // One answer in native llama.cpp, after a warm-up answer, in a fresh
  // process: same file, messages, context, threads and flash attention.
  const nativeAnswer = (threads, run) => {
    if (!PYTHON) throw new Error('HEARTH_LLAMA_PYTHON is not set: cargo xtask bench installs llama-cpp-python');
    const out = execFileSync(PYTHON, [path.join(here, 'tabmodel_native.py'), JSON.stringify({
      model: MODEL, context: CONTEXT, threads, runs: 1, warmup: 1, max_tokens: MAX_TOKENS, messages: messagesFor(run),
    })], { encoding: 'utf8', maxBuffer: 1 << 20 });
    return JSON.parse(out.trim().split('\n').at(-1));
  };

  const results = [];
  for (const config of configs) {
    // Loaded afresh, then a first answer apart: it runs partly on V8's
    // baseline wasm code until the hot functions are optimised.
    await page.evaluate(() => window.__bench.unload());
    const first = await tabAnswer(config, -1, false);
    const tab = { prompt: [], output: [] };
    const native = { prompt: [], output: [], load: [] };
    let last;
    // The tab and native llama.cpp take turns, so both meet the same load.
    // The other configurations are there to compare, and 2 threads on a
    // busy 2-core machine can take minutes an answer: one answer each.
    const runs = config.app ? RUNS : 1;
    for (let i = 0; i < runs; i++) {
      const t = await tabAnswer(config, i, config.app && i === 0);
      last = t.timings;
      tab.prompt.push(t.timings.prompt_per_second);
      tab.output.push(t.timings.predicted_per_second);
      if (typeof t.memory === 'number') figures.tab_memory_bytes = t.memory;
      const n = nativeAnswer(config.threads, i);
      native.prompt.push(n.prompt_per_second);
      native.output.push(n.output_per_second);
      native.load.push(n.load_ms);
      native.prompt_tokens = n.prompt_tokens;
    }
    results.push({
      ...config,
      first_prompt: first.timings.prompt_per_second,
      first_output: first.timings.predicted_per_second,
      prompt_tokens: last.prompt_n,
      output_tokens: last.predicted_n,
      tab_prompt: median(tab.prompt),
      tab_output: median(tab.output),
      native_prompt: median(native.prompt),
      native_output: median(native.output),
      native_prompt_tokens: native.prompt_tokens,
      native_load_ms: median(native.load),
      runs,
    });
  }
  figures.configs = results;
  const app = results[0];
  figures.prompt_ratio = app.tab_prompt / app.native_prompt;
  figures.output_ratio = app.tab_output / app.native_output;

  const tps = (x) => `${x.toFixed(1)} tok/s`;
  const label = (c) => `${c.threads} thread${c.threads === 1 ? '' : 's'}, ${c.build}${c.app ? ' (the app\'s choice)' : ''}`;
  console.log(`  model: ${path.basename(MODEL)}, context ${CONTEXT}, ${MAX_TOKENS} tokens out, ${cores} cores, median of ${RUNS}, tab and native in turn`);
  line('store the picked file in the private file system', `${(figures.store_ms / 1000).toFixed(1)} s`);
  line(`load from the private file system (median of ${LOADS})`, `${(figures.load_ms / 1000).toFixed(2)} s`);
  line('native load time', `${(app.native_load_ms / 1000).toFixed(2)} s`);
  for (const c of results) {
    console.log(`  ${label(c)}:`);
    line(`  prompt processing, tab / native (${c.prompt_tokens} / ${c.native_prompt_tokens} tokens)`, `${tps(c.tab_prompt)} / ${tps(c.native_prompt)}`);
    line('  prompt processing ratio tab / native', `${(c.tab_prompt / c.native_prompt).toFixed(2)}x`, c.app ? 'goal: >= 0.5x' : '');
    line('  generation, tab / native', `${tps(c.tab_output)} / ${tps(c.native_output)}`);
    line('  generation ratio tab / native', `${(c.tab_output / c.native_output).toFixed(2)}x`, c.app ? 'goal: >= 0.5x' : '');
    line('  first answer after a load: prompt / generation', `${tps(c.first_prompt)} / ${tps(c.first_output)}`);
  }
  line('the tab\'s memory while answering', typeof figures.tab_memory_bytes === 'number' ? `${(figures.tab_memory_bytes / 1e6).toFixed(0)} MB` : String(figures.tab_memory_bytes));
  console.log(`tabmodel-figures ${JSON.stringify(figures)}`);
  // The figures for `cargo xtask bench`'s table.
  for (const c of results) {
    const suffix = c.app ? '' : ` (${c.threads} thread${c.threads === 1 ? '' : 's'}, ${c.build})`;
    const detail = `SmolLM2-135M Q4_1, ${label(c)}, ${c.runs === 1 ? 'one answer' : `median of ${c.runs}`}, in turn with native`;
    const tabPrompt = { figure: `in-tab model: prompt processing${suffix}`, value: c.tab_prompt };
    const nativePrompt = { figure: `native llama.cpp: prompt processing${suffix}`, value: c.native_prompt };
    const tabOut = { figure: `in-tab model: generation${suffix}`, value: c.tab_output };
    const nativeOut = { figure: `native llama.cpp: generation${suffix}`, value: c.native_output };
    for (const f of [tabPrompt, nativePrompt, tabOut, nativeOut]) figure({ ...f, unit: 'tok/s', detail });
    ratio(`in-tab model: prompt processing vs native${suffix}`, tabPrompt, nativePrompt, c.app ? { min: 0.5 } : undefined);
    ratio(`in-tab model: generation vs native${suffix}`, tabOut, nativeOut, c.app ? { min: 0.5 } : undefined);
    if (c.app) {
      figure({ figure: 'in-tab model: generation, first answer after a load', value: c.first_output, unit: 'tok/s', detail: 'before V8 has optimised the hot wasm' });
    }
  }
  figure({ figure: 'in-tab model: load from the private file system', value: figures.load_ms, unit: 'ms', detail: `median of ${LOADS} cold loads, ${figures.tab_build}` });
  figure({ figure: 'native llama.cpp: load', value: app.native_load_ms, unit: 'ms' });
  if (typeof figures.tab_memory_bytes === 'number') {
    figure({ figure: 'in-tab model: the tab\'s memory while answering', value: figures.tab_memory_bytes / 1e6, unit: 'MB' });
  }
} finally {
  await browser.close();
  server.kill();
}
