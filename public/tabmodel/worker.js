// Hearth's model in the tab: a Worker that runs GGUF models with Hearth's
// own build of llama.cpp (src/tabmodel/llama/, built by `cargo xtask` with
// llama.cpp's WebAssembly SIMD kernels, 32-bit memory and threads). The app
// starts one and talks to it with the messages below; model files are read
// from the origin private file system, where the app stored them.
//
// App -> worker:
//   {type: 'chat', id, model, context, threads?, chatTemplate?, body}
//       Loads `model` (models/<model>.gguf) with `context` tokens if it is
//       not the one loaded, then runs `body`: an OpenAI-style chat request
//       (messages, tools, sampling options, max_tokens, stop), or
//       {prompt, max_tokens, ...} to continue raw text with no template.
//       `threads` overrides the measured choice (the bench and tests);
//       `chatTemplate` (Jinja) replaces the model's own template.
//   {type: 'load', id, model, context, threads?, chatTemplate?}
//       Loads without asking anything (the bench; warming up).
//   {type: 'bench', id, model, context, threads, pp, tg}
//       llama-bench's measurement on the loaded model: `pp` prompt tokens
//       in one batch, then `tg` tokens one at a time.
//   {type: 'profile', id, model, context, threads, pp}
//       Where a `pp`-token prompt's time goes, by kind of operation.
//   {type: 'stop', id}      Ends that request at the next token.
//   {type: 'unload', id}    Frees the model (before its file is deleted).
//
// Worker -> app:
//   {type: 'progress', id, phase, loaded, total}
//       phase 'runtime' (the engine's bytes), 'model' (the file, in bytes),
//       'threads' (measuring thread counts, in steps) or 'prompt' (the
//       prompt's tokens processed so far)
//   {type: 'loaded', id, model, ms, threads, pool, context, measured}
//   {type: 'line', id, line}   one chunk of the reply as a line of JSON
//                              (OpenAI's chat.completion.chunk with
//                              llama.cpp's timings), or {"error": {"type",
//                              "message"}} when it failed
//   {type: 'done', id, tokens?, bench?, profile?}   the request is over
//                              (after its last line); `tokens` are the
//                              generated ids, `bench` and `profile` the
//                              bench's measurements
//
// The engine is one classic script plus its wasm and its threads' script,
// under /llama/. Its threads are a fixed pool started with it: the wasm's
// memory is shared, so the page must be cross-origin isolated (Hearth's
// server and, after a reload, its service worker send COOP and COEP).
'use strict';

const ENGINE = '/llama/';
const MODELS_DIR = 'models';
// Measured thread counts, by model and core count, in the private file
// system (outside the models folder, whose every file is a model's).
const THREADS_FILE = 'tabmodel-threads.json';
// Prompt tokens per step: small enough that progress moves and Stop is
// heard within a moment, large enough to keep llama.cpp's batch efficient.
const PROMPT_STEP = 64;
// The most threads the engine starts, whatever the browser reports.
const MAX_POOL = 8;

let engine = null; // the Emscripten module once created
let starting = null; // the promise while it is created
let api = null; // the engine's functions
let loaded = null; // {key, model, context, threads, pool}
let loading = null; // a promise while a load runs
let busy = Promise.resolve(); // requests run one after another
const requests = new Map(); // id -> {stopped}

const post = (message) => self.postMessage(message);

class HearthError extends Error {
  constructor(type, message) {
    super(message);
    this.type = type;
  }
}

function errorLine(e) {
  const type = e instanceof HearthError ? e.type : 'inference_error';
  const message = String((e && e.message) || e || 'unknown error');
  return JSON.stringify({ error: { type, message } });
}

// The smallest module with a SIMD instruction (v128.const in a function).
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 22, 1, 20, 0, 253, 12, 0, 0, 0, 0, 0, 0, 0,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 11,
]);

// What this browser and page lack for the engine, in words, or null.
function missingFeature() {
  if (typeof WebAssembly !== 'object' || !WebAssembly.validate(SIMD_PROBE)) {
    return 'this browser has no WebAssembly SIMD, which the model engine needs';
  }
  if (typeof SharedArrayBuffer !== 'function' || !self.crossOriginIsolated) {
    return (
      'this page is not cross-origin isolated, so the model engine cannot start its threads. ' +
      'Reload the page: Hearth then serves it with the headers threads need (COOP and COEP)'
    );
  }
  return null;
}

// Yields to the worker's event loop, so Stop and other messages are heard
// between steps (a MessageChannel, not setTimeout, which browsers slow down).
function yieldToEvents() {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(null);
  });
}

async function fetchWithProgress(url, onBytes) {
  const response = await fetch(url);
  if (!response.ok) {
    throw new HearthError('load_error', `${url} answered ${response.status}: the model engine is not in this build`);
  }
  const total = Number(response.headers.get('content-length')) || 0;
  const reader = response.body.getReader();
  const parts = [];
  let got = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    got += value.byteLength;
    onBytes(got, total);
  }
  return new Uint8Array(await new Blob(parts).arrayBuffer());
}

// The number of threads the engine starts: the cores the browser reports,
// up to MAX_POOL. Which of them run is measured per model (see measure).
function poolSize() {
  return Math.max(1, Math.min(MAX_POOL, navigator.hardwareConcurrency || 1));
}

// Creates the engine once: its wasm (with progress), its script, and its
// pool of threads, each of which loads the script and the same module.
async function startEngine(id) {
  if (engine) return engine;
  if (!starting) {
    starting = (async () => {
      const missing = missingFeature();
      if (missing) throw new HearthError('unsupported', missing);
      const wasm = await fetchWithProgress(`${ENGINE}hearth-llama.wasm`, (loaded, total) =>
        post({ type: 'progress', id, phase: 'runtime', loaded, total }),
      );
      if (typeof self.createHearthLlama !== 'function') {
        try {
          importScripts(`${ENGINE}hearth-llama.js`);
        } catch (e) {
          throw new HearthError('load_error', `the model engine's script did not load: ${e.message || e}`);
        }
      }
      const pool = poolSize();
      const module = await self.createHearthLlama({
        // llama.cpp's own pool has `pool` threads, one of which is this
        // worker's: the others are Emscripten's pthreads.
        hearthPool: pool - 1,
        wasmBinary: wasm,
        mainScriptUrlOrBlob: `${ENGINE}hearth-llama.js`,
        locateFile: (name) => `${ENGINE}${name}`,
        print: () => {},
        printErr: () => {},
      });
      api = {
        load: module.cwrap('hl_load', 'number', ['string', 'number', 'number', 'number', 'string']),
        info: module.cwrap('hl_info', 'string', []),
        setThreads: module.cwrap('hl_set_threads', 'number', ['number']),
        start: module.cwrap('hl_start', 'string', ['string']),
        prompt: module.cwrap('hl_prompt', 'number', ['number']),
        next: module.cwrap('hl_next', 'string', []),
        finish: module.cwrap('hl_finish', 'string', ['string']),
        bench: module.cwrap('hl_bench', 'string', ['number', 'number']),
        profile: module.cwrap('hl_profile', 'string', ['number']),
        error: module.cwrap('hl_error', 'string', []),
        unload: module.cwrap('hl_unload', null, []),
      };
      engine = module;
      return module;
    })();
    starting.catch(() => {
      starting = null;
    });
  }
  return starting;
}

async function modelFile(model) {
  if (!/^[A-Za-z0-9_-]{1,100}$/.test(model)) {
    throw new HearthError('model_missing', `'${model}' is not a model id`);
  }
  try {
    const root = await navigator.storage.getDirectory();
    const dir = await root.getDirectoryHandle(MODELS_DIR);
    const handle = await dir.getFileHandle(`${model}.gguf`);
    return await handle.getFile();
  } catch (e) {
    if (e && e.name === 'NotFoundError') {
      throw new HearthError('model_missing', `no stored file for model ${model}`);
    }
    throw e;
  }
}

async function readThreads() {
  try {
    const root = await navigator.storage.getDirectory();
    const file = await (await root.getFileHandle(THREADS_FILE)).getFile();
    return JSON.parse(await file.text()) || {};
  } catch {
    return {};
  }
}

async function saveThreads(all) {
  try {
    const root = await navigator.storage.getDirectory();
    const handle = await root.getFileHandle(THREADS_FILE, { create: true });
    const writable = await handle.createWritable();
    await writable.write(JSON.stringify(all));
    await writable.close();
  } catch {
    // Not kept: it is measured again next time.
  }
}

function benchTimes(pp, tg) {
  const r = JSON.parse(api.bench(pp, tg));
  if (r.error) throw new HearthError('inference_error', r.error.message);
  return r;
}

// The thread count that answers fastest here, measured on the loaded
// model: a short prompt batch and a few single tokens, weighted like a
// turn (a prompt of a few hundred tokens, a reply of about a hundred), for
// 1, 2, 3, … threads until one is slower than the best so far. The
// browser's core count is only the upper bound: a tab may get fewer cores
// than it reports, and llama.cpp's threads wait for each other by
// spinning, so one thread too many costs far more than it gains.
function measure(id, pool) {
  const counts = [];
  for (let n = 1; n <= pool; n += n < 4 ? 1 : 2) counts.push(n);
  // The first run also brings the engine's hot code up to speed.
  api.setThreads(1);
  benchTimes(16, 2);
  let best = { threads: 1, cost: Infinity };
  for (const [i, n] of counts.entries()) {
    post({ type: 'progress', id, phase: 'threads', loaded: i, total: counts.length });
    api.setThreads(n);
    const { pp_ms: pp, tg_ms: tg } = benchTimes(32, 4);
    const cost = (pp / 32) * 300 + (tg / 4) * 100;
    // More threads must earn their place by a clear margin.
    if (cost < best.cost * 0.95) best = { threads: n, cost };
    else break;
  }
  post({ type: 'progress', id, phase: 'threads', loaded: counts.length, total: counts.length });
  return best.threads;
}

function unload() {
  loaded = null;
  if (api) api.unload();
}

async function load(id, { model, context, threads, chatTemplate }) {
  const key = JSON.stringify([model, context, chatTemplate || '']);
  while (loading) {
    try {
      await loading;
    } catch {
      // The other load's failure is reported to its own request.
    }
  }
  if (loaded && loaded.key === key) {
    if (Number.isInteger(threads) && threads > 0 && threads !== loaded.threads) {
      loaded.threads = api.setThreads(threads);
    }
    return loaded;
  }
  loading = (async () => {
    unload();
    const module = await startEngine(id);
    const file = await modelFile(model);
    const started = performance.now();
    const pool = poolSize();
    // The file is read in place (WORKERFS reads the Blob in slices), with
    // llama.cpp's own progress; it is unmounted once the weights are in
    // memory.
    const mount = '/model';
    try {
      module.FS.mkdir(mount);
    } catch {
      // Already there.
    }
    module.FS.mount(module.FS.filesystems.WORKERFS, { blobs: [{ name: 'model.gguf', data: file }] }, mount);
    let shown = -1;
    module.hearthProgress = (p) => {
      const pct = Math.floor(p * 100);
      if (pct === shown) return;
      shown = pct;
      post({ type: 'progress', id, phase: 'model', loaded: p * file.size, total: file.size });
    };
    let rc;
    try {
      rc = api.load(`${mount}/model.gguf`, context, pool, 1, chatTemplate || '');
    } finally {
      module.hearthProgress = null;
      try {
        module.FS.unmount(mount);
      } catch {
        // Nothing mounted.
      }
    }
    if (rc !== 0) {
      const message = api.error();
      if (/memory|alloc|OOM/i.test(message)) throw new HearthError('out_of_memory', message);
      throw new HearthError('load_error', message || 'the model could not be loaded');
    }
    let chosen = Number.isInteger(threads) && threads > 0 ? threads : 0;
    let measured = false;
    if (!chosen) {
      const all = await readThreads();
      const mine = all[model];
      if (mine && mine.pool === pool && mine.threads <= pool) {
        chosen = mine.threads;
      } else {
        chosen = measure(id, pool);
        measured = true;
        all[model] = { threads: chosen, pool, at: Date.now() };
        await saveThreads(all);
      }
    }
    chosen = api.setThreads(chosen);
    const ms = performance.now() - started;
    loaded = { key, model, context, threads: chosen, pool };
    post({ type: 'loaded', id, model, ms, threads: chosen, pool, context, measured });
    return loaded;
  })();
  try {
    return await loading;
  } finally {
    loading = null;
  }
}

function postChunks(id, chunks) {
  for (const c of chunks) post({ type: 'line', id, line: JSON.stringify(c) });
}

async function chat(message) {
  const { id, body } = message;
  const request = { stopped: false };
  requests.set(id, request);
  let tokens;
  try {
    await load(id, message);
    if (request.stopped) return;
    const started = JSON.parse(api.start(JSON.stringify(body)));
    if (started.error) throw new HearthError(started.error.type, started.error.message);
    // The prompt, in steps, with its progress (tokens already in the
    // cache from the conversation's earlier turns count as done).
    const total = started.prompt_tokens;
    let left = total - started.cached;
    post({ type: 'progress', id, phase: 'prompt', loaded: started.cached, total });
    while (left > 0) {
      if (request.stopped) break;
      left = api.prompt(PROMPT_STEP);
      if (left < 0) throw new HearthError('inference_error', api.error());
      post({ type: 'progress', id, phase: 'prompt', loaded: total - left, total });
      await yieldToEvents();
    }
    for (;;) {
      if (request.stopped) {
        // Stop: what was held back and the counts so far, so the stopped
        // reply keeps its tokens and speed.
        const end = JSON.parse(api.finish('stop'));
        postChunks(id, end.chunks || []);
        tokens = end.tokens;
        break;
      }
      const step = JSON.parse(api.next());
      if (step.error) throw new HearthError(step.error.type, step.error.message);
      postChunks(id, step.chunks);
      if (step.done) {
        tokens = step.tokens;
        break;
      }
      await yieldToEvents();
    }
  } catch (e) {
    post({ type: 'line', id, line: errorLine(e) });
  } finally {
    requests.delete(id);
    post({ type: 'done', id, tokens });
  }
}

async function bench(message) {
  const { id, pp, tg } = message;
  try {
    await load(id, message);
    const times = benchTimes(pp, tg);
    post({ type: 'done', id, bench: times });
  } catch (e) {
    post({ type: 'line', id, line: errorLine(e) });
    post({ type: 'done', id });
  }
}

async function profile(message) {
  const { id, pp } = message;
  try {
    await load(id, message);
    const r = JSON.parse(api.profile(pp));
    if (r.error) throw new HearthError(r.error.type, r.error.message);
    post({ type: 'done', id, profile: r });
  } catch (e) {
    post({ type: 'line', id, line: errorLine(e) });
    post({ type: 'done', id });
  }
}

// Requests run one at a time, in the order they came; Stop and unload
// act at once.
function queue(run) {
  busy = busy.then(run, run);
}

self.onmessage = (event) => {
  const message = event.data || {};
  switch (message.type) {
    case 'chat':
      queue(() => chat(message));
      break;
    case 'load':
      queue(() =>
        load(message.id, message).then(
          () => post({ type: 'done', id: message.id }),
          (e) => {
            post({ type: 'line', id: message.id, line: errorLine(e) });
            post({ type: 'done', id: message.id });
          },
        ),
      );
      break;
    case 'bench':
      queue(() => bench(message));
      break;
    case 'profile':
      queue(() => profile(message));
      break;
    case 'stop': {
      const request = requests.get(message.id);
      if (request) request.stopped = true;
      break;
    }
    case 'unload':
      for (const request of requests.values()) request.stopped = true;
      queue(async () => {
        unload();
        post({ type: 'unloaded', id: message.id });
      });
      break;
    default:
      break;
  }
};
