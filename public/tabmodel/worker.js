// Hearth's model in the tab: a module Worker that runs GGUF models with
// wllama (llama.cpp compiled to WebAssembly). The app starts one and talks
// to it with the messages below; model files are read from the origin
// private file system, where the app stored them.
//
// App -> worker:
//   {type: 'chat', id, model, context, threads?, build?, chatTemplate?, body}
//       Loads `model` (models/<model>.gguf) with `context` tokens if it is
//       not the one loaded, then runs `body` (an OpenAI-style chat request)
//       through wllama's createChatCompletion, streaming. `threads` and
//       `build` ('wasm64' or 'wasm32') override the worker's own choice
//       (the bench and the tests use them).
//   {type: 'load', id, model, context, threads?, build?, chatTemplate?}
//       Loads without asking anything (the bench; warming up).
//   {type: 'stop', id}      Interrupts that request at the next token.
//   {type: 'unload'}        Frees the model (before its file is deleted).
//
// Worker -> app:
//   {type: 'progress', id, phase: 'runtime'|'model', loaded, total}
//   {type: 'loaded', id, model, ms, threads, multithread, build, context}
//   {type: 'line', id, line}   one chunk of the reply as a line of JSON, or
//                              {"error": {"type", "message"}} when it failed
//   {type: 'done', id}         the request is over (after its last line)
//
// wllama's files are copied from npm into the build and cached by the
// service worker on first use. There are two builds of the same llama.cpp:
// - 'wasm64' (/wllama/wllama.wasm): 64-bit memory and JSPI, wllama's main
//   build; used wherever the browser has both.
// - 'wasm32' (/wllama/compat/): 32-bit memory, with Asyncify in place of
//   JSPI; used where either is missing, so such a browser still runs models
//   (it is never fetched elsewhere).
// Both run the same kernels at about the same speed (docs/benchmarks.md).
// The wasm is handed to wllama as a blob: URL of bytes fetched here, so
// wllama's own nested workers never need the network or the service worker.
'use strict';

const RUNTIME_JS = '/wllama/index.js';
const BUILDS = {
  wasm64: { wasm: '/wllama/wllama.wasm' },
  wasm32: { wasm: '/wllama/compat/wllama.wasm', glue: '/wllama/compat/wllama.js' },
};
const MODELS_DIR = 'models';

let Wllama = null;
const runtimes = new Map(); // build -> {wasmUrl, glue}
let loaded = null; // {key, model, context, wllama}
let loading = null; // a promise while a load runs
const requests = new Map(); // id -> AbortController

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

function hasMemory64() {
  try {
    new WebAssembly.Memory({ address: 'i64', initial: 1n });
    return true;
  } catch {
    return false;
  }
}

// The smallest module with a SIMD instruction (v128.const in a function).
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 22, 1, 20, 0, 253, 12, 0, 0, 0, 0, 0, 0, 0,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 11,
]);

// The build to run: the one asked for, else the 64-bit one where JSPI and
// 64-bit memory exist, else the 32-bit one. Both need WebAssembly SIMD.
function chooseBuild(requested) {
  if (typeof WebAssembly !== 'object' || !WebAssembly.validate(SIMD_PROBE)) {
    throw new HearthError('unsupported', 'this browser has no WebAssembly SIMD, which the model runtime needs');
  }
  const wasm64 = typeof WebAssembly.Suspending === 'function' && hasMemory64();
  if (requested === 'wasm64' && !wasm64) {
    throw new HearthError('unsupported', 'this browser lacks WebAssembly JSPI or 64-bit memory, which the wasm64 build needs');
  }
  if (requested === 'wasm64' || requested === 'wasm32') return requested;
  return wasm64 ? 'wasm64' : 'wasm32';
}

async function fetchWithProgress(url, onBytes) {
  const response = await fetch(url);
  if (!response.ok) {
    throw new HearthError('load_error', `${url} answered ${response.status}: the model runtime is not in this build`);
  }
  const total = Number(response.headers.get('content-length')) || 0;
  const reader = response.body.getReader();
  const parts = [];
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    loaded += value.byteLength;
    onBytes(loaded, total);
  }
  return new Blob(parts, { type: 'application/wasm' });
}

async function loadRuntime(id, build) {
  if (!Wllama) ({ Wllama } = await import(RUNTIME_JS));
  if (runtimes.has(build)) return runtimes.get(build);
  const files = BUILDS[build];
  const wasm = await fetchWithProgress(files.wasm, (loaded, total) =>
    post({ type: 'progress', id, phase: 'runtime', loaded, total }),
  );
  let glue = null;
  if (files.glue) {
    const response = await fetch(files.glue);
    if (!response.ok) {
      throw new HearthError('load_error', `${files.glue} answered ${response.status}: the model runtime is not in this build`);
    }
    glue = await response.text();
  }
  const runtime = { wasmUrl: URL.createObjectURL(wasm), glue };
  runtimes.set(build, runtime);
  return runtime;
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

// llama.cpp's threads spin while they wait for each other, so more threads
// than free cores costs far more than it gains (measured: on 2 busy cores,
// 2 threads ran slower than 1). Half the logical cores is about one thread
// per physical core where cores have two hardware threads, and leaves room
// for the page and the rest of the machine; threads need cross-origin
// isolation.
function threadsFor(requested) {
  if (Number.isInteger(requested) && requested > 0) return requested;
  if (!self.crossOriginIsolated) return 1;
  return Math.max(1, Math.min(8, Math.floor((navigator.hardwareConcurrency || 1) / 2)));
}

async function unload() {
  const current = loaded;
  loaded = null;
  if (current) {
    try {
      await current.wllama.exit();
    } catch {
      // The worker underneath is gone either way.
    }
  }
}

async function load(id, { model, context, threads, build: requestedBuild, chatTemplate }) {
  const key = JSON.stringify([model, context, threads || 0, requestedBuild || '', chatTemplate || '']);
  if (loaded && loaded.key === key) return loaded;
  while (loading) {
    try {
      await loading;
    } catch {
      // The other load's failure is reported to its own request.
    }
    if (loaded && loaded.key === key) return loaded;
  }
  loading = (async () => {
    await unload();
    const build = chooseBuild(requestedBuild);
    const { wasmUrl, glue } = await loadRuntime(id, build);
    const file = await modelFile(model);
    // wllama reads the file in slices as llama.cpp asks for them; the
    // bytes read so far are the load's progress.
    const slice = file.slice.bind(file);
    let read = 0;
    let shown = 0;
    file.slice = (start, end, type) => {
      const from = Math.max(0, Number(start) || 0);
      const to = Math.min(file.size, typeof end === 'number' ? end : file.size);
      read = Math.min(file.size, read + Math.max(0, to - from));
      if (read - shown >= file.size / 100 || read === file.size) {
        shown = read;
        post({ type: 'progress', id, phase: 'model', loaded: read, total: file.size });
      }
      return slice(start, end, type);
    };
    const quiet = { debug() {}, log() {}, warn() {}, error: (...a) => console.error('wllama:', ...a) };
    const wllama = new Wllama({ default: wasmUrl }, { logger: quiet, suppressNativeLog: true });
    // Never the CDN copy of the 32-bit build: wllama would fetch it itself
    // where JSPI or 64-bit memory is missing.
    wllama.setCompat(null);
    if (build === 'wasm32') {
      // wllama picks its 32-bit build only where the browser lacks a
      // feature; this chooses it here, with the files of this build.
      wllama.getWorkerResources = () => ({ wasmPath: wasmUrl, jsPath: { code: glue }, compat: true });
    }
    const started = performance.now();
    const n = threadsFor(threads);
    const params = { n_ctx: context, n_threads: n, n_parallel: 1, n_gpu_layers: 0 };
    if (chatTemplate) {
      params.chat_template = chatTemplate;
      params.jinja = true;
    }
    try {
      await wllama.loadModel([file], params);
    } catch (e) {
      try {
        await wllama.exit();
      } catch {
        // Nothing to free.
      }
      const message = String((e && e.message) || e);
      if (/memory|allocat|OOM/i.test(message)) throw new HearthError('out_of_memory', message);
      throw new HearthError('load_error', message);
    }
    const ms = performance.now() - started;
    loaded = { key, model, context, wllama };
    post({
      type: 'loaded',
      id,
      model,
      ms,
      threads: wllama.getNumThreads(),
      multithread: wllama.isMultithread(),
      build,
      context,
    });
    return loaded;
  })();
  try {
    return await loading;
  } finally {
    loading = null;
  }
}

async function chat(message) {
  const { id, body } = message;
  const controller = new AbortController();
  requests.set(id, controller);
  let broken = false;
  try {
    const { wllama } = await load(id, message);
    if (controller.signal.aborted) return;
    const options = { ...body, stream: true, abortSignal: controller.signal };
    delete options.model;
    const stream = await wllama.createChatCompletion(options);
    // Read to the end even after Stop: wllama then ends the stream with
    // its abort error, which is caught here rather than left unhandled.
    for await (const chunk of stream) {
      if (!controller.signal.aborted) post({ type: 'line', id, line: JSON.stringify(chunk) });
    }
  } catch (e) {
    if (controller.signal.aborted || (e && e.name === 'WllamaAbortError')) return;
    // After a failure inside llama.cpp the runtime may be unusable; the
    // next request loads the model afresh.
    broken = !(e instanceof HearthError);
    post({ type: 'line', id, line: errorLine(e) });
  } finally {
    requests.delete(id);
    post({ type: 'done', id });
    if (broken) await unload();
  }
}

self.onmessage = (event) => {
  const message = event.data || {};
  switch (message.type) {
    case 'chat':
      chat(message);
      break;
    case 'load':
      load(message.id, message).then(
        () => post({ type: 'done', id: message.id }),
        (e) => {
          post({ type: 'line', id: message.id, line: errorLine(e) });
          post({ type: 'done', id: message.id });
        },
      );
      break;
    case 'stop': {
      const controller = requests.get(message.id);
      if (controller) controller.abort();
      break;
    }
    case 'unload':
      for (const controller of requests.values()) controller.abort();
      unload().then(() => post({ type: 'unloaded', id: message.id }));
      break;
    default:
      break;
  }
};
