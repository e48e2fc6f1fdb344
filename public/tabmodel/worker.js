// Hearth's model in the tab: a module Worker that runs GGUF models with
// wllama (llama.cpp compiled to WebAssembly). The app starts one and talks
// to it with the messages below; model files are read from the origin
// private file system, where the app stored them.
//
// App -> worker:
//   {type: 'chat', id, model, context, threads?, chatTemplate?, body}
//       Loads `model` (models/<model>.gguf) with `context` tokens if it is
//       not the one loaded, then runs `body` (an OpenAI-style chat request)
//       through wllama's createChatCompletion, streaming.
//   {type: 'load', id, model, context, threads?, chatTemplate?}
//       Loads without asking anything (the bench; warming up).
//   {type: 'stop', id}      Interrupts that request at the next token.
//   {type: 'unload'}        Frees the model (before its file is deleted).
//
// Worker -> app:
//   {type: 'progress', id, phase: 'runtime'|'model', loaded, total}
//   {type: 'loaded', id, model, ms, threads, context}
//   {type: 'line', id, line}   one chunk of the reply as a line of JSON, or
//                              {"error": {"type", "message"}} when it failed
//   {type: 'done', id}         the request is over (after its last line)
//
// wllama's files (/wllama/index.js and /wllama/wllama.wasm) are copied from
// npm into the build and cached by the service worker on first use. The
// wasm is handed to wllama as a blob: URL of bytes fetched here, so
// wllama's own nested workers never need the network or the service worker.
'use strict';

const RUNTIME_JS = '/wllama/index.js';
const RUNTIME_WASM = '/wllama/wllama.wasm';
const MODELS_DIR = 'models';

let runtime = null; // {Wllama, wasmUrl}
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

// JSPI and 64-bit memory are what wllama's main build needs; without them
// it would fetch a compatibility build from a CDN, which Hearth never does.
function checkBrowser() {
  if (typeof WebAssembly.Suspending !== 'function') {
    throw new HearthError('unsupported', 'this browser has no WebAssembly JSPI');
  }
  try {
    new WebAssembly.Memory({ address: 'i64', initial: 1n });
  } catch {
    throw new HearthError('unsupported', 'this browser has no 64-bit WebAssembly memory');
  }
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

async function loadRuntime(id) {
  if (runtime) return runtime;
  checkBrowser();
  const wasm = await fetchWithProgress(RUNTIME_WASM, (loaded, total) =>
    post({ type: 'progress', id, phase: 'runtime', loaded, total }),
  );
  const { Wllama } = await import(RUNTIME_JS);
  runtime = { Wllama, wasmUrl: URL.createObjectURL(wasm) };
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

function threadsFor(requested) {
  if (Number.isInteger(requested) && requested > 0) return requested;
  // Leave a core for the page; threads need cross-origin isolation.
  if (!self.crossOriginIsolated) return 1;
  return Math.max(1, Math.min(8, (navigator.hardwareConcurrency || 1) - 1));
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

async function load(id, { model, context, threads, chatTemplate }) {
  const key = JSON.stringify([model, context, threads || 0, chatTemplate || '']);
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
    const { Wllama, wasmUrl } = await loadRuntime(id);
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
    // Never the CDN compatibility build.
    wllama.setCompat(null);
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
