// Where the in-tab engine's prompt time goes, and an A/B of two engine
// builds in one run: for each build (HEARTH_ENGINES, comma-separated
// folders holding hearth-llama.{js,wasm,worker.js}; default: the app's
// dist/llama), each file and thread count, in turns: the engine's `bench`
// request (PP random ids in one batch, then TG single decodes; median of
// RUNS after a warm-up) and its `profile` request (the same prompt with
// every graph node timed alone, by operation and weight type, plus
// sampling one token), and a greedy answer to a 20-odd-token prompt,
// compared across the builds. Prints figures; asserts nothing. Not part of
// `cargo xtask bench`: run it by hand with `node e2e/bench/tabmodel-profile.mjs`
// after `cargo xtask build` (it uses target/debug/hearth and dist/).
import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { chromiumLaunchOptions, hearthBin, hearthDist, repoRoot } from '../support/env.mjs';
import { freePort } from '../support/mcp.mjs';
import { median } from './figures.mjs';

const MODELS = process.env.HEARTH_BENCH_MODELS || path.join(repoRoot, '.test-fixtures', 'models');
const ENGINES = (process.env.HEARTH_ENGINES || path.join(hearthDist, 'llama')).split(',');
const RUNS = Number(process.env.HEARTH_BENCH_RUNS || 3);
const PP = Number(process.env.HEARTH_BENCH_PP || 128);
const TG = Number(process.env.HEARTH_BENCH_TG || 32);
const QUANTS = (process.env.HEARTH_BENCH_QUANTS || 'Q4_0,Q8_0').split(',');
const THREADS = (process.env.HEARTH_BENCH_THREADS || '1,2').split(',').map(Number);
const CONTEXT = 1024;
const GREEDY_PROMPT =
  'The water cycle moves water between the oceans, the air and the land. Explain in two sentences how rain forms:';
const fileOf = (quant) => path.join(MODELS, `SmolLM2-135M-Instruct.${quant}.gguf`);

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
// The model files from a host on 127.0.0.1, as in tabmodel.mjs.
const models = http.createServer((req, res) => {
  const quant = decodeURIComponent(new URL(req.url, 'http://x').pathname.slice(1)).replace(/\.gguf$/, '');
  if (!QUANTS.includes(quant)) {
    res.writeHead(404);
    res.end();
    return;
  }
  res.writeHead(200, { 'content-length': String(fs.statSync(fileOf(quant)).size), 'access-control-allow-origin': '*' });
  fs.createReadStream(fileOf(quant)).pipe(res);
});
await new Promise((resolve) => models.listen(0, '127.0.0.1', resolve));
const modelHost = `http://127.0.0.1:${models.address().port}`;

const browser = await chromium.launch(chromiumLaunchOptions());
const results = [];
try {
  const context = await browser.newContext({ serviceWorkers: 'block' });
  const page = await context.newPage();
  let engine = ENGINES[0];
  // The engine's three files from the build under test.
  await page.route('**/llama/hearth-llama*', (route) => {
    const name = path.basename(new URL(route.request().url()).pathname);
    const type = name.endsWith('.js') ? 'text/javascript' : 'application/wasm';
    // The isolation headers the app's server sends: the engine's threads
    // start from hearth-llama.worker.js, and a worker script without them
    // cannot share the engine's memory.
    const headers = {
      'cross-origin-resource-policy': 'same-origin',
      'cross-origin-embedder-policy': 'require-corp',
      'cross-origin-opener-policy': 'same-origin',
    };
    return route.fulfill({ path: path.join(engine, name), contentType: type, headers });
  });
  page.on('console', (m) => process.env.HEARTH_DEBUG && console.log(`  page: ${m.text()}`));
  await page.goto(`${base}/#/chat`);
  await page.waitForSelector('body[data-ready]');
  await page.evaluate(
    async ({ quants, modelHost }) => {
      const root = await navigator.storage.getDirectory();
      const dir = await root.getDirectoryHandle('models', { create: true });
      for (const q of quants) {
        const response = await fetch(`${modelHost}/${q}.gguf`);
        const handle = await dir.getFileHandle(`bench-${q}.gguf`, { create: true });
        await response.body.pipeTo(await handle.createWritable());
      }
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
          const out = { lines: [], done: null };
          const listen = (e) => {
            const m = e.data;
            if (m.id !== id) return;
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
    },
    { quants: QUANTS, modelHost },
  );
  const tab = (message) => page.evaluate((m) => window.__tab(m), message);
  const failure = (r) => r.lines.find((l) => l.error);
  for (const quant of QUANTS) {
    for (const threads of THREADS) {
      for (const dir of ENGINES) {
        engine = dir;
        await page.evaluate(() => window.__tabEnd());
        const common = { model: `bench-${quant}`, context: CONTEXT, threads };
        if (process.env.HEARTH_DEBUG) console.log(`  ${quant} t=${threads} ${dir}`);
        const runs = [];
        for (let i = 0; i <= RUNS; i++) {
          const r = await tab({ type: 'bench', ...common, pp: PP, tg: TG });
          if (failure(r)) throw new Error(`${dir}: bench failed: ${JSON.stringify(failure(r))}`);
          if (i > 0) runs.push(r.done.bench);
        }
        const p = await tab({ type: 'profile', ...common, pp: PP });
        if (failure(p)) throw new Error(`${dir}: profile failed: ${JSON.stringify(failure(p))}`);
        // The same greedy answer from every build: a prompt long enough
        // for the batched products (more than eight tokens).
        const c = await tab({ type: 'chat', ...common, body: { prompt: GREEDY_PROMPT, max_tokens: 32, temperature: 0 } });
        if (failure(c)) throw new Error(`${dir}: completion failed: ${JSON.stringify(failure(c))}`);
        const text = c.lines.map((l) => l.choices?.[0]?.delta?.content || '').join('');
        const row = {
          text,
          engine: dir,
          quant,
          threads,
          pp: median(runs.map((b) => (PP * 1000) / b.pp_ms)),
          tg: median(runs.map((b) => (TG * 1000) / b.tg_ms)),
          profile: p.done.profile,
        };
        results.push(row);
        console.log(`${quant} t=${threads} ${dir}: pp ${row.pp.toFixed(1)} tok/s, tg ${row.tg.toFixed(1)} tok/s`);
        const by = Object.entries(row.profile.by_kind).sort((a, b) => b[1] - a[1]);
        const total = by.reduce((s, [, ms]) => s + ms, 0);
        for (const [kind, ms] of by) console.log(`    ${kind.padEnd(40)} ${ms.toFixed(1).padStart(8)} ms ${((100 * ms) / total).toFixed(1).padStart(5)} %`);
        console.log(`    ${'sampling one token'.padEnd(40)} ${row.profile.sample_ms.toFixed(1).padStart(8)} ms`);
      }
    }
  }
  await page.evaluate(() => window.__tabEnd());
  for (const quant of QUANTS) {
    for (const threads of THREADS) {
      const texts = new Set(results.filter((r) => r.quant === quant && r.threads === threads).map((r) => r.text));
      console.log(`${quant} t=${threads}: ${texts.size === 1 ? 'every build gave the same greedy answer' : 'the builds answered differently'}: ${JSON.stringify([...texts])}`);
    }
  }
} finally {
  await browser.close();
  server.kill();
  models.close();
}
console.log(`PROFILE ${JSON.stringify(results)}`);
