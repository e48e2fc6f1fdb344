// Hearth's service worker.
//
// - The app shell (index.html, the hashed wasm/js/css trunk emits, the
//   manifest, icons, sandbox pages) is precached at install from a list
//   generated after every build by `cargo xtask precache`, each file checked
//   against its SHA-256, and served cache first.
// - The Python runtime (/pyodide/, tens of MB) is never fetched at install:
//   it is cached on first use (each file verified as it passes through), or
//   all at once when the person asks in Settings (`cache-python`), with
//   progress posted to the app.
// - The in-tab model engine (/llama/, about 6 MB) is cached the same
//   way, on first use only. Model files themselves live in the origin
//   private file system, never in a cache.
// - The chunks of features that stay off until the person turns them on
//   (sync's) are cached the same way, on first use only, so a person who
//   never turns sync on never downloads its code.
// - Updates are safe: a new build installs in the background and waits. The
//   app shows "Reload to update"; only that click (`skip-waiting`) activates
//   it. Caches of older builds stay while any open tab still runs one.
// - /api/ (the network tier) and other origins are never touched.
//
// Cached responses keep the headers the host sent (COOP, COEP, CORP, CSP).
// Where the host sent none (any plain static server), the worker adds what
// Hearth needs to every response it serves: COOP and COEP on the app's
// page, so it is cross-origin isolated (Python interrupts need that); on
// the app's pages a `frame-ancestors 'none'` policy, so no other page can
// frame them, and `X-DNS-Prefetch-Control: off`, so a link in a reply is
// not looked up before anyone clicks it; and on pages under /sandbox/ a
// `sandbox allow-scripts` policy, so they open in an opaque origin even in
// a frame without a sandbox attribute (frames sandboxed by their attribute
// are never served by a service worker).
'use strict';

// `cargo xtask precache` replaces the next line with this build's list:
// {id, python_id, tabmodel_id, on_use_id, shell: [{url, sha256, size}], python: [...], tabmodel: [...], on_use: [...]}.
// Left null (the step did not run), the worker caches nothing.
self.HEARTH_BUILD = null;

const BUILD = self.HEARTH_BUILD;
const PREFIX = 'hearth-';
const SHELL = BUILD ? `${PREFIX}shell-${BUILD.id}` : null;
const PYTHON = BUILD ? `${PREFIX}python-${BUILD.python_id}` : null;
const SHELL_FILES = new Map((BUILD ? BUILD.shell : []).map((f) => [f.url, f]));
const PYTHON_FILES = new Map((BUILD ? BUILD.python : []).map((f) => [f.url, f]));
const PYTHON_BYTES = (BUILD ? BUILD.python : []).reduce((n, f) => n + f.size, 0);
const TABMODEL = BUILD && BUILD.tabmodel_id ? `${PREFIX}tabmodel-${BUILD.tabmodel_id}` : null;
const TABMODEL_FILES = new Map((BUILD && BUILD.tabmodel ? BUILD.tabmodel : []).map((f) => [f.url, f]));
const ON_USE = BUILD && BUILD.on_use_id ? `${PREFIX}on-use-${BUILD.on_use_id}` : null;
const ON_USE_FILES = new Map((BUILD && BUILD.on_use ? BUILD.on_use : []).map((f) => [f.url, f]));

// Downloads in flight, by URL, so the background job and a page asking for
// the same file share one download.
const inflight = new Map();

function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, '0')).join('');
}

async function sha256(buffer) {
  return hex(await crypto.subtle.digest('SHA-256', buffer));
}

// trunk's hashed names never change content, so the HTTP cache may answer;
// everything else is revalidated.
function isHashed(url) {
  return /-[0-9a-f]{12,16}(_bg)?\.[a-z]+$/.test(url);
}

async function post(message) {
  const clients = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  for (const client of clients) client.postMessage(message);
}

// Fetches `file` and checks it against the build's list. `onBytes(n)` is
// told as bytes arrive. Returns a response with the server's headers.
async function fetchVerified(file, onBytes) {
  const request = new Request(file.url, {
    cache: isHashed(file.url) ? 'default' : 'no-cache',
    credentials: 'same-origin',
    redirect: 'error',
  });
  const response = await fetch(request);
  if (!response.ok) throw new Error(`${file.url} answered ${response.status}`);
  const chunks = [];
  let received = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    received += value.byteLength;
    if (onBytes) onBytes(value.byteLength);
  }
  const body = await new Blob(chunks).arrayBuffer();
  const digest = await sha256(body);
  if (digest !== file.sha256) {
    throw new Error(
      `${file.url} does not match this build (expected ${file.sha256.slice(0, 12)}…, got ${digest.slice(0, 12)}…); the server may hold a different build`,
    );
  }
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

// Puts every listed file that the cache lacks, `limit` at a time.
async function fill(cacheName, files, onBytes, onFile) {
  const cache = await caches.open(cacheName);
  const missing = [];
  for (const file of files) {
    if (await cache.match(file.url)) onFile(file, true);
    else missing.push(file);
  }
  let next = 0;
  const worker = async () => {
    while (next < missing.length) {
      const file = missing[next++];
      let job = inflight.get(file.url);
      if (!job) {
        job = fetchVerified(file, onBytes).then((r) => cache.put(file.url, r));
        inflight.set(file.url, job);
        job.finally(() => inflight.delete(file.url)).catch(() => {});
      }
      await job;
      onFile(file, false);
    }
  };
  await Promise.all([worker(), worker(), worker()]);
}

function throttled(fn, ms) {
  let last = 0;
  return (force) => {
    const now = Date.now();
    if (force || now - last >= ms) {
      last = now;
      fn();
    }
  };
}

async function cacheShell() {
  const files = [...SHELL_FILES.values()];
  let done = 0;
  const report = throttled(() => post({ type: 'install-progress', done, total: files.length }), 100);
  await fill(SHELL, files, null, () => {
    done += 1;
    report(done === files.length);
  });
}

let pythonJob = null;

// Fetches the Python runtime files the cache lacks, posting progress.
function cachePython() {
  if (!BUILD || PYTHON_FILES.size === 0) return Promise.resolve();
  if (pythonJob) return pythonJob;
  let loaded = 0;
  const report = throttled(
    () => post({ type: 'python-progress', loaded, total: PYTHON_BYTES, done: false }),
    150,
  );
  pythonJob = fill(
    PYTHON,
    [...PYTHON_FILES.values()],
    (n) => {
      loaded += n;
      report(false);
    },
    (file, wasCached) => {
      if (wasCached) loaded += file.size;
      report(false);
    },
  )
    .then(() => post({ type: 'python-progress', loaded: PYTHON_BYTES, total: PYTHON_BYTES, done: true }))
    .catch((e) =>
      post({ type: 'python-progress', loaded, total: PYTHON_BYTES, done: false, error: String(e.message || e) }),
    )
    .finally(() => {
      pythonJob = null;
    });
  return pythonJob;
}

self.addEventListener('install', (event) => {
  if (!BUILD) return;
  event.waitUntil(
    (async () => {
      // Only the shell: the Python runtime is large and waits for first
      // use or the person's "Download now".
      await cacheShell();
    })(),
  );
});

// Asks a tab which build it runs; null when it does not say in time.
function askBuild(client) {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    const timer = setTimeout(() => resolve(null), 3000);
    channel.port1.onmessage = (e) => {
      clearTimeout(timer);
      resolve(e.data && typeof e.data.build === 'string' ? e.data.build : null);
    };
    client.postMessage({ type: 'which-build' }, [channel.port2]);
  });
}

// Deletes the caches of builds no open tab runs. A tab that does not answer
// keeps every cache, so nothing a running tab might need goes away.
async function cleanup() {
  if (!BUILD) return;
  const clients = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  const builds = await Promise.all(clients.map(askBuild));
  if (builds.some((b) => b === null)) return;
  const keep = new Set([SHELL, PYTHON, TABMODEL, ON_USE]);
  for (const b of builds) keep.add(`${PREFIX}shell-${b}`);
  const olderTabs = builds.some((b) => b !== BUILD.id);
  for (const name of await caches.keys()) {
    if (!name.startsWith(PREFIX) || keep.has(name)) continue;
    // An older tab may still load its Python, its model runtime or a
    // feature's chunk.
    if (olderTabs && ['python-', 'tabmodel-', 'on-use-'].some((g) => name.startsWith(`${PREFIX}${g}`))) continue;
    await caches.delete(name);
  }
}

self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      if (BUILD) await self.clients.claim();
      await cleanup();
    })(),
  );
});

async function status() {
  const shell = SHELL ? await caches.open(SHELL) : null;
  const python = PYTHON ? await caches.open(PYTHON) : null;
  let shellCached = 0;
  for (const url of SHELL_FILES.keys()) if (shell && (await shell.match(url))) shellCached += 1;
  let pythonCached = 0;
  let pythonCachedBytes = 0;
  for (const f of PYTHON_FILES.values()) {
    if (python && (await python.match(f.url))) {
      pythonCached += 1;
      pythonCachedBytes += f.size;
    }
  }
  return {
    build: BUILD ? BUILD.id : null,
    shell: { cached: shellCached, total: SHELL_FILES.size },
    python: {
      cached: pythonCached,
      total: PYTHON_FILES.size,
      bytes: pythonCachedBytes,
      total_bytes: PYTHON_BYTES,
      downloading: pythonJob !== null,
    },
  };
}

self.addEventListener('message', (event) => {
  const data = event.data || {};
  const reply = (value) => event.ports[0] && event.ports[0].postMessage(value);
  switch (data.type) {
    case 'skip-waiting':
      // Only ever sent when the person pressed "Reload to update".
      self.skipWaiting();
      break;
    case 'status':
      event.waitUntil(status().then(reply, (e) => reply({ error: String(e) })));
      break;
    case 'cache-python':
      event.waitUntil(cachePython().then(status).then(reply, (e) => reply({ error: String(e) })));
      break;
    case 'hello':
      // A tab started: a good moment to drop caches nobody needs.
      event.waitUntil(cleanup());
      break;
    default:
      break;
  }
});

// A runtime file (Python's or the in-tab model's): cache first; on a miss,
// the page gets the network response as it streams and the cache gets a
// verified copy.
async function runtimeFile(event, file, cacheName) {
  const cache = await caches.open(cacheName);
  const hit = await cache.match(file.url);
  if (hit) return hit;
  const pending = inflight.get(file.url);
  if (pending) {
    try {
      await pending;
      const now = await cache.match(file.url);
      if (now) return now;
    } catch {
      // Fall through to the network.
    }
  }
  const response = await fetch(event.request);
  if (response.ok) {
    const copy = response.clone();
    event.waitUntil(
      (async () => {
        const body = await copy.arrayBuffer();
        if ((await sha256(body)) !== file.sha256) return;
        await cache.put(
          file.url,
          new Response(body, { status: copy.status, statusText: copy.statusText, headers: copy.headers }),
        );
      })().catch(() => {}),
    );
  }
  return response;
}

// The headers Hearth needs on `response` for `url`, added where the host
// did not send them. Adding a policy never loosens one the host sent: every
// Content-Security-Policy of a response is enforced.
const SANDBOX_POLICY = "sandbox allow-scripts; frame-ancestors 'self'";
const APP_FRAMING_POLICY = "frame-ancestors 'none'";
// Under /sandbox/ however the path is spelled (doubled slashes, escapes):
// a host may well serve the same file for those spellings too.
function isSandboxPath(path) {
  let plain = path;
  try {
    plain = decodeURIComponent(path);
  } catch {
    // Not decodable: take it as written.
  }
  return plain.replace(/\/+/g, '/').startsWith('/sandbox/');
}
function withHearthHeaders(url, response) {
  if (!response || response.type === 'opaque' || response.type === 'error') return response;
  const headers = new Headers(response.headers);
  const missing = (name, value) => {
    if (!headers.has(name)) headers.set(name, value);
  };
  const type = headers.get('content-type') || '';
  if (isSandboxPath(url.pathname)) {
    headers.append('content-security-policy', SANDBOX_POLICY);
    // Framed in an opaque origin, the page is cross-origin to Hearth.
    headers.set('cross-origin-resource-policy', 'cross-origin');
    missing('cross-origin-embedder-policy', 'require-corp');
  } else if (type.startsWith('text/html')) {
    missing('cross-origin-opener-policy', 'same-origin');
    missing('cross-origin-embedder-policy', 'require-corp');
    // Added to whatever policy the host sent: every policy is enforced.
    headers.append('content-security-policy', APP_FRAMING_POLICY);
    missing('x-dns-prefetch-control', 'off');
  } else {
    return response;
  }
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

async function respond(event, url) {
  const request = event.request;
  const path = url.pathname;
  if (request.mode === 'navigate' && (path === '/' || path === '/index.html')) {
    const shell = await caches.open(SHELL);
    const page = await shell.match('/index.html');
    if (page) return page;
    return fetch(request);
  }
  if (SHELL_FILES.has(path)) {
    const shell = await caches.open(SHELL);
    const hit = await shell.match(path);
    if (hit) return hit;
    return fetch(request);
  }
  if (PYTHON_FILES.has(path)) return runtimeFile(event, PYTHON_FILES.get(path), PYTHON);
  if (TABMODEL_FILES.has(path)) return runtimeFile(event, TABMODEL_FILES.get(path), TABMODEL);
  if (ON_USE_FILES.has(path)) return runtimeFile(event, ON_USE_FILES.get(path), ON_USE);
  // A file of an older build, still asked for by a tab that runs it.
  const old = await caches.match(request, { ignoreSearch: true });
  if (old) return old;
  return fetch(request);
}

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  const path = url.pathname;
  if (path === '/api' || path.startsWith('/api/') || path === '/healthz' || path === '/sw.js') return;
  if (!BUILD) {
    // Nothing cached, but sandbox pages still open only in an opaque origin.
    if (isSandboxPath(path)) event.respondWith(fetch(request).then((r) => withHearthHeaders(url, r)));
    return;
  }
  event.respondWith(respond(event, url).then((r) => withHearthHeaders(url, r)));
});
