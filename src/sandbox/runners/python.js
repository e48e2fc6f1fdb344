// Hearth's Python runner: a classic Worker the sandbox host keeps warm, one
// per conversation. Pyodide 314 ships as ES modules; an opaque-origin
// document cannot start module workers from blob URLs, so this classic
// worker imports the modules with import() from blob URLs instead. (Pyodide
// refuses classic workers it can run importScripts("data:…") in; the
// sandbox's policy forbids that, which is also how it passes.) The sandbox
// has no network at all: the runtime's files arrive as bytes from the app,
// and while Pyodide starts, its own fetches of them are answered from
// those bytes. The host proved this worker's no-network policy before it
// sent the runtime.
//
// Files handed to a run appear read-only under /mnt/data; what the code
// writes under /mnt/out comes back as artifacts. Input JSON is on stdin.
(() => {
  'use strict';

  const post = self.postMessage.bind(self);
  const listen = self.addEventListener.bind(self);
  const realFetch = self.fetch;
  const parseJson = JSON.parse;
  const stringifyJson = JSON.stringify;
  const encoder = new TextEncoder();
  const encode = encoder.encode.bind(encoder);
  const utf8 = new TextDecoder();
  const decode = utf8.decode.bind(utf8);
  const now = performance.now.bind(performance);
  const testRegExp = Function.prototype.call.bind(RegExp.prototype.test);
  const objectFromEntries = Object.fromEntries;

  // --- Keeping the JavaScript realm clean between runs -------------------
  // The worker lives across runs, and Python reaches its JavaScript realm
  // through `import js`. A run that replaces built-ins (JSON, Array.prototype
  // methods, globals) would otherwise break every later run and Pyodide's
  // own glue. So the built-ins are recorded once Pyodide is up and put back
  // before every run: added properties on them are removed, replaced or
  // deleted ones restored. Globals a run adds are left alone.
  const ownKeys = Reflect.ownKeys;
  const describe = Object.getOwnPropertyDescriptor;
  const define = Reflect.defineProperty;
  const remove = Reflect.deleteProperty;
  const intrinsics = [
    Object, Object.prototype, Function, Function.prototype, Array, Array.prototype,
    String, String.prototype, Number, Number.prototype, Boolean.prototype, Symbol, Symbol.prototype,
    BigInt.prototype, RegExp, RegExp.prototype, Date.prototype, Error, Error.prototype,
    Promise, Promise.prototype, Map.prototype, Set.prototype, WeakMap.prototype, WeakRef.prototype,
    ArrayBuffer, ArrayBuffer.prototype, Object.getPrototypeOf(Uint8Array), Object.getPrototypeOf(Uint8Array.prototype),
    Uint8Array.prototype, Int32Array.prototype, DataView.prototype, JSON, Math, Reflect, Atomics,
    TextEncoder.prototype, TextDecoder.prototype, Response.prototype, Blob.prototype, URL, WebAssembly,
    WebAssembly.Module, WebAssembly.Instance.prototype, WebAssembly.Memory.prototype, Proxy,
  ];
  let realm = null;
  // Restoring must not lean on what it restores: index loops only, and
  // Set's methods called through bound intrinsics.
  const NativeSet = Set;
  const setAdd = Function.prototype.call.bind(Set.prototype.add);
  const setHas = Function.prototype.call.bind(Set.prototype.has);

  const snapshot = (target) => {
    const keys = ownKeys(target);
    const entries = [];
    for (let i = 0; i < keys.length; i++) entries[i] = { key: keys[i], was: describe(target, keys[i]) };
    return entries;
  };

  const sameDescriptor = (a, b) => a !== undefined && b !== undefined
    && a.value === b.value && a.get === b.get && a.set === b.set
    && a.writable === b.writable && a.enumerable === b.enumerable && a.configurable === b.configurable;

  const recordRealm = () => {
    const objects = [];
    for (let i = 0; i < intrinsics.length; i++) objects[i] = { target: intrinsics[i], entries: snapshot(intrinsics[i]) };
    realm = { objects, globals: snapshot(self) };
  };

  const restoreEntries = (target, entries, removeAdded) => {
    const known = new NativeSet();
    for (let i = 0; i < entries.length; i++) {
      const { key, was } = entries[i];
      setAdd(known, key);
      const now = describe(target, key);
      if (!sameDescriptor(now, was)) {
        if (now !== undefined && now.configurable) remove(target, key);
        define(target, key, was);
      }
    }
    if (removeAdded) {
      const keys = ownKeys(target);
      for (let i = 0; i < keys.length; i++) {
        if (!setHas(known, keys[i])) remove(target, keys[i]);
      }
    }
  };

  const restoreRealm = () => {
    if (!realm) return;
    for (let i = 0; i < realm.objects.length; i++) restoreEntries(realm.objects[i].target, realm.objects[i].entries, true);
    restoreEntries(self, realm.globals, false);
  };

  // Python gets one thread: no workers of its own.
  for (const name of ['Worker', 'SharedWorker']) {
    try { delete self[name]; } catch (_) { /* keep going */ }
  }

  // A host name that can never resolve: requests for it are answered here.
  const INDEX = 'https://pyodide.invalid/';
  const MAX_SESSIONS = 16;
  const HELPERS = String.raw`
import json, linecache, os, reprlib, sys, traceback
from pyodide.code import eval_code_async

_repr = reprlib.Repr()
_repr.maxlevel = 6
for _name in ("maxtuple", "maxlist", "maxarray", "maxdict", "maxset", "maxfrozenset", "maxdeque"):
    setattr(_repr, _name, 200)
_repr.maxstring = _repr.maxlong = _repr.maxother = 20000


def new_namespace():
    return {"__name__": "__main__", "__builtins__": __builtins__}


def _failure(e):
    tb = e.__traceback__
    # Drop Pyodide's own frames: the traceback starts in the person's code.
    while tb is not None and tb.tb_frame.f_code.co_filename != "<code>":
        tb = tb.tb_next
    line = None
    if isinstance(e, SyntaxError) and e.filename == "<code>":
        line = e.lineno
    else:
        for frame in traceback.extract_tb(tb):
            if frame.filename == "<code>":
                line = frame.lineno
    text = "".join(traceback.format_exception(type(e), e, tb))
    return {"ok": False, "name": type(e).__name__, "message": str(e), "line": line, "traceback": text}


async def run(code, namespace, value_limit):
    # Tracebacks then show the lines of the person's code.
    linecache.cache["<code>"] = (len(code), None, code.splitlines(True), "<code>")
    try:
        try:
            value = await eval_code_async(code, namespace, filename="<code>")
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except Exception:
                    pass
    except SystemExit as e:
        if e.code is None or e.code == 0:
            return {"ok": True, "repr": None, "json": None}
        return _failure(e)
    except BaseException as e:
        return _failure(e)
    if value is None:
        return {"ok": True, "repr": None, "json": None}
    try:
        shown = _repr.repr(value)
    except BaseException as e:
        shown = f"<value whose repr failed: {type(e).__name__}>"
    try:
        as_json = json.dumps(value, allow_nan=False)
        if len(as_json) > value_limit:
            as_json = None
    except BaseException:
        as_json = None
    return {"ok": True, "repr": shown, "json": as_json}
`;

  let secret = null;
  let py = null;
  let helpers = null; // { run, newNamespace }: Python functions
  // The flag the sandbox page raises to interrupt a run past its limit,
  // when the page is cross-origin isolated.
  let interrupt = null;
  let busy = false;
  let stdinText = null;
  let sink = { out: null, err: null };
  const sessions = new Map();

  const capture = (limit) => {
    let text = '';
    let bytes = 0;
    let dropped = 0;
    const streaming = new TextDecoder();
    return {
      write(chunk) {
        const s = streaming.decode(chunk, { stream: true });
        const b = chunk.length;
        if (bytes + b <= limit) {
          text += s;
          bytes += b;
        } else {
          const room = Math.max(0, limit - bytes);
          const asBytes = encode(s);
          let cut = room > 0 ? decode(asBytes.subarray(0, Math.min(room, asBytes.length))) : '';
          if (cut.endsWith('\uFFFD')) cut = cut.slice(0, -1);
          const kept = encode(cut).length;
          text += cut;
          bytes += kept;
          dropped += asBytes.length - kept;
        }
        return chunk.length;
      },
      get text() { return text; },
      get dropped() { return dropped; },
    };
  };

  const send = (message, transfer = []) => post({ ...message, nonce: secret }, transfer);

  const boot = async (m) => {
    const t0 = now();
    const files = m.files;
    const blobUrl = (name) => URL.createObjectURL(new Blob([files[name]], { type: 'text/javascript' }));
    self.fetch = (resource, init) => {
      const url = typeof resource === 'string' ? resource : String((resource && resource.url) || resource);
      if (url.startsWith(INDEX)) {
        const name = url.slice(INDEX.length);
        const body = files[name];
        if (!body) return Promise.reject(new TypeError(`the Python runtime has no file ${name}`));
        const type = name.endsWith('.wasm') ? 'application/wasm' : 'application/octet-stream';
        return Promise.resolve(new Response(body, { status: 200, headers: { 'content-type': type } }));
      }
      return realFetch(resource, init);
    };
    try {
      for (const name of ['pyodide.mjs', 'pyodide.asm.mjs', 'pyodide.asm.wasm', 'python_stdlib.zip', 'pyodide-lock.json']) {
        if (!(files[name] instanceof ArrayBuffer)) throw new Error(`the runtime file ${name} is missing`);
      }
      const [{ loadPyodide }, asm] = await Promise.all([import(blobUrl('pyodide.mjs')), import(blobUrl('pyodide.asm.mjs'))]);
      py = await loadPyodide({
        indexURL: INDEX,
        lockFileContents: decode(files['pyodide-lock.json']),
        createPyodideModule: asm.default,
        stdout: () => {},
        stderr: () => {},
        env: { HOME: '/home/pyodide' },
      });
      if (m.sab) {
        interrupt = new Int32Array(m.sab);
        py.setInterruptBuffer(interrupt);
      }
      py.setStdout({ write: (chunk) => (sink.out ? sink.out.write(chunk) : chunk.length), isatty: false });
      py.setStderr({ write: (chunk) => (sink.err ? sink.err.write(chunk) : chunk.length), isatty: false });
      py.setStdin({
        stdin: () => {
          const text = stdinText;
          stdinText = null;
          return text;
        },
        isatty: false,
      });
      const namespace = py.globals.get('dict')();
      py.runPython(HELPERS, { globals: namespace });
      helpers = { run: namespace.get('run'), newNamespace: namespace.get('new_namespace') };
      // fetch goes back to the browser's own before the realm is recorded.
      self.fetch = realFetch;
      recordRealm();
      send({ kind: 'booted', version: py.version, ms: now() - t0 });
    } catch (e) {
      send({ kind: 'boot_failed', message: String((e && e.message) || e) });
    } finally {
      // From here on, the network APIs are the browser's own again, and
      // the sandbox's CSP refuses them.
      self.fetch = realFetch;
    }
  };

  // --- /mnt/data and /mnt/out ------------------------------------------

  const removeTree = (FS, path) => {
    if (!FS.analyzePath(path).exists) return;
    const stat = FS.stat(path);
    if (FS.isDir(stat.mode)) {
      FS.chmod(path, 0o755);
      for (const name of FS.readdir(path)) {
        if (name !== '.' && name !== '..') removeTree(FS, `${path}/${name}`);
      }
      FS.rmdir(path);
    } else {
      FS.unlink(path);
    }
  };

  const makeReadOnly = (FS, path) => {
    const stat = FS.stat(path);
    if (FS.isDir(stat.mode)) {
      for (const name of FS.readdir(path)) {
        if (name !== '.' && name !== '..') makeReadOnly(FS, `${path}/${name}`);
      }
      FS.chmod(path, 0o555);
    } else {
      FS.chmod(path, 0o444);
    }
  };

  const mountFiles = (files) => {
    const FS = py.FS;
    FS.mkdirTree('/mnt');
    removeTree(FS, '/mnt/data');
    removeTree(FS, '/mnt/out');
    FS.mkdirTree('/mnt/data');
    FS.mkdirTree('/mnt/out');
    for (const f of files) {
      const parts = String(f.name).split('/');
      if (!String(f.name).startsWith('/mnt/data/') || parts.some((p) => p === '..' || p === '.')) continue;
      FS.mkdirTree(parts.slice(0, -1).join('/'));
      FS.writeFile(f.name, new Uint8Array(f.bytes));
    }
    makeReadOnly(FS, '/mnt/data');
  };

  const collectOut = (limits) => {
    const FS = py.FS;
    const artifacts = [];
    const dropped = [];
    let total = 0;
    const walk = (dir, rel) => {
      for (const name of FS.readdir(dir)) {
        if (name === '.' || name === '..') continue;
        const path = `${dir}/${name}`;
        const shown = rel ? `${rel}/${name}` : name;
        const stat = FS.stat(path);
        if (FS.isDir(stat.mode)) {
          walk(path, shown);
        } else if (artifacts.length >= limits.max_artifacts) {
          dropped.push(`${shown}: over the limit of ${limits.max_artifacts} files`);
        } else if (total + stat.size > limits.max_artifact_bytes) {
          dropped.push(`${shown}: ${stat.size} bytes would pass the ${limits.max_artifact_bytes}-byte limit`);
        } else {
          const bytes = FS.readFile(path);
          total += bytes.byteLength;
          artifacts.push({ name: shown, bytes });
        }
      }
    };
    if (FS.analyzePath('/mnt/out').exists) walk('/mnt/out', '');
    return { artifacts, dropped };
  };

  // --- Runs ---------------------------------------------------------------

  const namespaceFor = (session) => {
    if (session === null) return { namespace: helpers.newNamespace(), keep: false };
    let namespace = sessions.get(session);
    if (namespace) {
      sessions.delete(session); // re-insert: most recently used last
    } else {
      namespace = helpers.newNamespace();
      if (sessions.size >= MAX_SESSIONS) {
        const [oldest, ns] = sessions.entries().next().value;
        sessions.delete(oldest);
        ns.destroy();
      }
    }
    sessions.set(session, namespace);
    return { namespace, keep: true };
  };

  const run = async (m) => {
    // The limit passed before this run could begin (the worker was busy
    // or starved of time): it ends interrupted without running, as it
    // would have at its first line. Raised here, the interrupt could land
    // in the event loop's own code instead and be lost.
    if (interrupt && Atomics.load(interrupt, 0) !== 0) {
      Atomics.store(interrupt, 0, 0);
      send({
        kind: 'result',
        id: m.id,
        outcome: {
          status: 'error', value: null, value_repr: null,
          error: { name: 'KeyboardInterrupt', message: '', line: null, traceback: null },
          stdout: '', stdout_dropped: 0, stderr: '', stderr_dropped: 0,
          artifacts: [], artifacts_dropped: [],
        },
      });
      return;
    }
    const limits = m.limits;
    const out = capture(limits.max_output_bytes);
    const err = capture(limits.max_output_bytes);
    sink = { out, err };
    stdinText = m.input === null || m.input === undefined ? null : stringifyJson(m.input);
    const outcome = { status: 'completed', value: null, value_repr: null, error: null };
    let artifacts = [];
    let droppedFiles = [];
    let fatal = null;
    try {
      mountFiles(m.files);
      const { namespace, keep } = namespaceFor(typeof m.session === 'string' ? m.session : null);
      const pending = helpers.run(m.code, namespace, limits.max_value_bytes);
      const proxy = await pending;
      const result = proxy.toJs({ dict_converter: objectFromEntries });
      proxy.destroy();
      if (!keep) namespace.destroy();
      if (result.ok) {
        outcome.value_repr = result.repr === undefined ? null : result.repr;
        if (typeof result.json === 'string') {
          try { outcome.value = parseJson(result.json); } catch (_) { outcome.value = null; }
        }
      } else {
        outcome.status = 'error';
        outcome.error = { name: result.name, message: result.message, line: result.line === undefined ? null : result.line, traceback: result.traceback };
      }
      ({ artifacts, dropped: droppedFiles } = collectOut(limits));
    } catch (e) {
      const message = String((e && e.message) || e);
      if (testRegExp(/fatal error/i, message)) fatal = message;
      outcome.status = 'error';
      outcome.error = { name: (e && e.name) || 'Error', message, line: null, traceback: null };
    } finally {
      sink = { out: null, err: null };
      stdinText = null;
    }
    if (fatal) {
      send({ kind: 'fatal', message: fatal });
      return;
    }
    send({
      kind: 'result',
      id: m.id,
      outcome: {
        ...outcome,
        stdout: out.text,
        stdout_dropped: out.dropped,
        stderr: err.text,
        stderr_dropped: err.dropped,
        artifacts,
        artifacts_dropped: droppedFiles,
      },
    }, transferList(artifacts));
  };

  const transferList = (artifacts) => {
    const list = [];
    for (let i = 0; i < artifacts.length; i++) list[i] = artifacts[i].bytes.buffer;
    return list;
  };

  /** An answer built with no built-in methods a run could have replaced. */
  const fallback = (id) => {
    send({
      kind: 'result',
      id,
      outcome: {
        status: 'error',
        error: {
          name: 'Error',
          message: 'an earlier run changed JavaScript built-ins the Python runner needs; restart Python (Settings → Code) to get a clean interpreter',
          line: null,
          traceback: null,
        },
      },
    });
  };

  listen('message', async (e) => {
    const m = e.data;
    if (!e.isTrusted || !m || typeof m !== 'object') return;
    if (m.kind === 'boot' && secret === null) {
      secret = String(m.nonce);
      await boot(m);
    } else if (m.kind === 'run' && helpers && !busy) {
      busy = true;
      try {
        restoreRealm();
        await run(m);
      } catch (_) {
        fallback(m.id);
      } finally {
        busy = false;
      }
    }
  });
})();
