// Hearth's JavaScript runner: a classic Worker the sandbox host starts for
// exactly one run and then terminates. Nothing here is trusted by the
// host; this file only makes the snippet's output easy to read.
//
// The snippet sees: `input` (the run's JSON input), console (captured),
// readFile / readTextFile / listFiles for the files handed to the run
// (under /mnt/data), and writeFile for files to return (under /mnt/out).
// A snippet that ends with an OffscreenCanvas returns its picture, as a
// PNG under /mnt/out.
(() => {
  'use strict';

  // Everything the runner needs after the snippet has run is taken now, so
  // a snippet that replaces globals or prototypes cannot reach into it.
  const post = self.postMessage.bind(self);
  const listen = self.addEventListener.bind(self);
  const indirectEval = self.eval;
  const FunctionCtor = Function;
  const AsyncFunction = (async () => {}).constructor;
  const SyntaxErrorCtor = SyntaxError;
  const clone = self.structuredClone;
  const encoder = new TextEncoder();
  const encode = encoder.encode.bind(encoder);
  const utf8 = new TextDecoder();
  const decode = utf8.decode.bind(utf8);
  const now = performance.now.bind(performance);
  const defineProperty = Object.defineProperty;
  const objectKeys = Object.keys;
  const getPrototypeOf = Object.getPrototypeOf;
  const isArray = Array.isArray;
  const toTag = Function.prototype.call.bind(Object.prototype.toString);
  const isView = ArrayBuffer.isView;
  const stringify = JSON.stringify;
  const functionSource = Function.prototype.call.bind(Function.prototype.toString);
  // A canvas the snippet returns becomes a PNG it wrote: its class and
  // encoder are taken now too.
  const Canvas = typeof OffscreenCanvas === 'function' ? OffscreenCanvas : null;
  const canvasToBlob = Canvas ? Function.prototype.call.bind(Canvas.prototype.convertToBlob) : null;
  const blobBytes = Function.prototype.call.bind(Blob.prototype.arrayBuffer);

  /** A failure while evaluating, as opposed to a value the snippet threw. */
  class EvalFailure {
    constructor(error, offset, syntax) {
      this.error = error;
      this.offset = offset;
      this.syntax = syntax;
    }
  }

  const SOURCE = 'snippet.js';
  // new AsyncFunction(body) compiles "(async function anonymous(\n) {\nbody\n})".
  const ASYNC_LINE_OFFSET = 2;
  const MAX_DEPTH = 6;
  const MAX_ITEMS = 100;

  let secret = null;
  let started = false;
  // What the snippet threw, kept for the fallback answer.
  let lastThrown;

  /** The message of a thrown value, read without calling its methods. */
  const plainMessage = (thrown) => {
    try {
      const message = thrown !== null && typeof thrown === 'object' ? thrown.message : thrown;
      return typeof message === 'string' ? message : '';
    } catch (_) {
      return '';
    }
  };

  /** An answer built with no built-in methods a snippet could replace. */
  const fallback = (id) => {
    const said = plainMessage(lastThrown);
    post({
      kind: 'result',
      nonce: secret,
      id,
      outcome: {
        status: 'error',
        error: {
          name: 'Error',
          message: (said ? said + ' ' : '') + '(the snippet changed built-in objects the runner needs, so no more of its result could be read)',
          line: null,
          traceback: null,
        },
      },
    });
  };

  // A run gets one thread: no workers of its own.
  for (const name of ['Worker', 'SharedWorker']) {
    try { delete self[name]; } catch (_) { /* keep going */ }
  }

  /** Output kept up to a byte limit; the rest only counted. */
  const capture = (limit) => {
    let text = '';
    let bytes = 0;
    let dropped = 0;
    return {
      push(s) {
        const b = encode(s);
        if (bytes + b.length <= limit) {
          text += s;
          bytes += b.length;
          return;
        }
        const room = limit - bytes;
        if (room > 0) {
          let cut = decode(b.subarray(0, room));
          if (cut.endsWith('\uFFFD')) cut = cut.slice(0, -1);
          const kept = encode(cut).length;
          text += cut;
          bytes += kept;
          dropped += b.length - kept;
        } else {
          dropped += b.length;
        }
      },
      get text() { return text; },
      get dropped() { return dropped; },
    };
  };

  /** Roughly what a browser console would print for a value. */
  const inspect = (value, depth = 0, seen = new Set(), top = true) => {
    try {
      switch (typeof value) {
        case 'string': return top ? value : stringify(value);
        case 'number': return Object.is(value, -0) ? '-0' : String(value);
        case 'bigint': return `${value}n`;
        case 'undefined': return 'undefined';
        case 'boolean': return String(value);
        case 'symbol': return value.toString();
        case 'function': {
          let src = '';
          try { src = functionSource(value); } catch (_) { /* a proxy, say */ }
          if (/^class\b/.test(src)) return value.name ? `[class ${value.name}]` : '[class (anonymous)]';
          return value.name ? `[Function: ${value.name}]` : '[Function (anonymous)]';
        }
        default: break;
      }
      if (value === null) return 'null';
      if (seen.has(value)) return '[Circular]';
      const tag = toTag(value);
      if (tag === '[object Error]' || value instanceof Error) {
        const stack = typeof value.stack === 'string' ? value.stack : `${value.name}: ${value.message}`;
        return top ? stack : `[${value.name}: ${value.message}]`;
      }
      if (tag === '[object Date]') return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
      if (tag === '[object RegExp]') return String(value);
      if (tag === '[object Promise]') return 'Promise { … }';
      if (depth >= MAX_DEPTH) return isArray(value) ? '[Array]' : '[Object]';
      seen.add(value);
      const inner = (v) => inspect(v, depth + 1, seen, false);
      let out;
      if (isArray(value)) {
        const items = value.slice(0, MAX_ITEMS).map(inner);
        if (value.length > MAX_ITEMS) items.push(`… ${value.length - MAX_ITEMS} more items`);
        out = `[ ${items.join(', ')} ]`.replace('[  ]', '[]');
      } else if (isView(value) && !(value instanceof DataView)) {
        const items = Array.from(value.slice(0, MAX_ITEMS), (x) => inspect(x, depth + 1, seen, false));
        if (value.length > MAX_ITEMS) items.push(`… ${value.length - MAX_ITEMS} more items`);
        out = `${value.constructor.name}(${value.length}) [ ${items.join(', ')} ]`;
      } else if (value instanceof ArrayBuffer) {
        out = `ArrayBuffer { byteLength: ${value.byteLength} }`;
      } else if (value instanceof Map) {
        const items = [...value].slice(0, MAX_ITEMS).map(([k, v]) => `${inner(k)} => ${inner(v)}`);
        out = `Map(${value.size}) { ${items.join(', ')} }`;
      } else if (value instanceof Set) {
        const items = [...value].slice(0, MAX_ITEMS).map(inner);
        out = `Set(${value.size}) { ${items.join(', ')} }`;
      } else {
        const proto = getPrototypeOf(value);
        const name = proto && proto !== Object.prototype && proto.constructor && proto.constructor.name ? `${proto.constructor.name} ` : '';
        const keys = objectKeys(value);
        const items = keys.slice(0, MAX_ITEMS).map((k) => `${/^[A-Za-z_$][\w$]*$/.test(k) ? k : stringify(k)}: ${inner(value[k])}`);
        if (keys.length > MAX_ITEMS) items.push(`… ${keys.length - MAX_ITEMS} more keys`);
        out = items.length ? `${name}{ ${items.join(', ')} }` : `${name}{}`;
      }
      seen.delete(value);
      return out;
    } catch (_) {
      return '[value that cannot be shown]';
    }
  };

  /** console's printf-style first argument: %s %d %i %f %o %O %j %c. */
  const format = (args) => {
    if (args.length === 0) return '';
    const [first, ...rest] = args;
    if (typeof first !== 'string' || !first.includes('%')) return args.map((a) => inspect(a)).join(' ');
    let i = 0;
    const head = first.replace(/%([sdifoOjc%])/g, (m, f) => {
      if (f === '%') return '%';
      if (i >= rest.length) return m;
      const a = rest[i++];
      switch (f) {
        case 's': return typeof a === 'string' ? a : inspect(a, 0, new Set(), false);
        case 'd': case 'i': return String(parseInt(a, 10));
        case 'f': return String(parseFloat(a));
        case 'c': return '';
        default: return inspect(a, 0, new Set(), false);
      }
    });
    return [head, ...rest.slice(i).map((a) => inspect(a))].join(' ');
  };

  /** Plain JSON data for a structured-clonable value, or undefined. */
  const toJson = (value, depth = 0, seen = new Set()) => {
    if (value === null) return null;
    switch (typeof value) {
      case 'string': case 'boolean': return value;
      case 'number': return Number.isFinite(value) ? value : String(value);
      case 'bigint': return value.toString();
      case 'undefined': return null;
      default: break;
    }
    if (depth > 64) throw new RangeError('nested too deeply');
    if (seen.has(value)) throw new TypeError('circular');
    seen.add(value);
    const tag = toTag(value);
    let out;
    if (isArray(value)) out = value.map((v) => toJson(v, depth + 1, seen));
    else if (tag === '[object Date]') out = Number.isNaN(value.getTime()) ? null : value.toISOString();
    else if (tag === '[object RegExp]') out = String(value);
    else if (value instanceof Map) out = [...value].map(([k, v]) => [toJson(k, depth + 1, seen), toJson(v, depth + 1, seen)]);
    else if (value instanceof Set) out = [...value].map((v) => toJson(v, depth + 1, seen));
    else if (isView(value) && !(value instanceof DataView)) out = Array.from(value, (v) => (typeof v === 'bigint' ? v.toString() : v));
    else if (value instanceof ArrayBuffer) out = Array.from(new Uint8Array(value));
    else if (tag === '[object Error]' || value instanceof Error) out = { name: String(value.name), message: String(value.message) };
    else {
      out = {};
      for (const k of objectKeys(value)) defineProperty(out, k, { value: toJson(value[k], depth + 1, seen), enumerable: true, writable: true, configurable: true });
    }
    seen.delete(value);
    return out;
  };

  const snippetFrames = (stack, offset) => {
    const frames = [];
    for (const raw of String(stack || '').split('\n')) {
      if (!raw.includes(SOURCE)) continue;
      const fixed = raw.trim().replace(/snippet\.js:(\d+):(\d+)/, (_, l, c) => `${SOURCE}:${Math.max(1, l - offset)}:${c}`)
        .replace(/^at eval \((.*)\)$/, 'at $1').replace(/^at anonymous \((.*)\)$/, 'at $1');
      frames.push(fixed);
    }
    return frames;
  };

  const firstLine = (frames) => {
    for (const f of frames) {
      const m = /snippet\.js:(\d+):\d+/.exec(f);
      if (m) return Number(m[1]);
    }
    return null;
  };

  /** The line of a syntax error: parse ever longer prefixes (no code runs). */
  const syntaxLine = (code, Ctor) => {
    const lines = code.split('\n');
    let prefix = '';
    for (let i = 0; i < lines.length && i < 5000; i++) {
      prefix += (i ? '\n' : '') + lines[i];
      try {
        new Ctor(prefix);
      } catch (e) {
        if (!/end of input|Unterminated|missing \) after|Unexpected end/i.test(String(e && e.message))) return i + 1;
      }
    }
    return lines.length;
  };

  const describeError = (err, offset, syntax) => {
    if (err === null || (typeof err !== 'object' && typeof err !== 'function')) {
      return { name: 'Uncaught', message: inspect(err), line: null, traceback: null };
    }
    let name = 'Error';
    let message = '';
    let stack = '';
    try { name = String(err.name); } catch (_) { /* keep default */ }
    try { message = String(err.message); } catch (_) { /* keep default */ }
    try { stack = String(err.stack); } catch (_) { /* keep default */ }
    if (syntax) {
      return { name, message, line: syntax.line, traceback: `    at ${SOURCE}:${syntax.line}` };
    }
    const frames = snippetFrames(stack, offset);
    return {
      name,
      message,
      line: firstLine(frames),
      traceback: frames.length ? frames.map((f) => `    ${f}`).join('\n') : null,
    };
  };

  /** Runs `code` like a console: the last expression's value, or, with
   * top-level await or return, what the async body returns. */
  const evaluate = (code) => {
    const src = `${code}\n//# sourceURL=${SOURCE}`;
    try {
      return { value: indirectEval(src), offset: 0 };
    } catch (scriptError) {
      const parseFailure = scriptError instanceof SyntaxErrorCtor && !String(scriptError.stack).includes(SOURCE);
      if (!parseFailure) throw new EvalFailure(scriptError, 0, null);
      let body;
      try {
        body = new AsyncFunction(src);
      } catch (bodyError) {
        const asyncMeant = /await|return/.test(String(scriptError.message));
        const [err, Ctor] = asyncMeant ? [bodyError, AsyncFunction] : [scriptError, FunctionCtor];
        throw new EvalFailure(err, 0, { line: syntaxLine(code, Ctor) });
      }
      return { value: body(), offset: ASYNC_LINE_OFFSET };
    }
  };

  const run = async (m) => {
    const limits = m.limits;
    const stdout = capture(limits.max_output_bytes);
    const stderr = capture(limits.max_output_bytes);
    const files = new Map();
    for (const f of m.files) files.set(f.name, new Uint8Array(f.bytes));
    const written = new Map();
    let writtenBytes = 0;

    const counts = new Map();
    const timers = new Map();
    let indent = '';
    const line = (sink) => (...args) => sink.push(`${indent}${format(args)}\n`);
    const consoleObject = {
      log: line(stdout), info: line(stdout), debug: line(stdout),
      warn: line(stderr), error: line(stderr),
      dir: (v) => stdout.push(`${indent}${inspect(v, 0, new Set(), false)}\n`),
      table: (v) => stdout.push(`${indent}${inspect(v, 0, new Set(), false)}\n`),
      trace: (...args) => stderr.push(`${indent}Trace: ${format(args)}\n`),
      assert: (ok, ...args) => { if (!ok) stderr.push(`${indent}Assertion failed${args.length ? ': ' + format(args) : ''}\n`); },
      count: (label = 'default') => { const n = (counts.get(label) || 0) + 1; counts.set(label, n); stdout.push(`${indent}${label}: ${n}\n`); },
      countReset: (label = 'default') => { counts.delete(label); },
      time: (label = 'default') => { timers.set(label, now()); },
      timeLog: (label = 'default', ...args) => { const t = timers.get(label); if (t !== undefined) stdout.push(`${indent}${label}: ${(now() - t).toFixed(3)} ms${args.length ? ' ' + format(args) : ''}\n`); },
      timeEnd: (label = 'default') => { const t = timers.get(label); if (t !== undefined) { timers.delete(label); stdout.push(`${indent}${label}: ${(now() - t).toFixed(3)} ms\n`); } },
      group: (...args) => { if (args.length) stdout.push(`${indent}${format(args)}\n`); indent += '  '; },
      groupCollapsed: (...args) => { if (args.length) stdout.push(`${indent}${format(args)}\n`); indent += '  '; },
      groupEnd: () => { indent = indent.slice(2); },
      clear: () => {},
    };

    const dataPath = (p) => {
      const s = String(p);
      const rel = s.startsWith('/mnt/data/') ? s.slice('/mnt/data/'.length) : s;
      return `/mnt/data/${rel.split('/').filter((x) => x && x !== '.').join('/')}`;
    };
    const fileBytes = (p) => {
      const key = dataPath(p);
      const bytes = files.get(key);
      if (!bytes) {
        const known = [...files.keys()];
        throw new Error(`no such file: ${key}. Files handed to this run: ${known.length ? known.join(', ') : 'none (pass them in "files")'}`);
      }
      return bytes;
    };
    const globals = {
      input: m.input,
      console: consoleObject,
      readFile: (p) => fileBytes(p).slice(),
      readTextFile: (p) => decode(fileBytes(p)),
      listFiles: () => [...files].map(([path, b]) => ({ path, size: b.byteLength })),
      writeFile: (p, data) => {
        const s = String(p);
        const name = (s.startsWith('/mnt/out/') ? s.slice('/mnt/out/'.length) : s).split('/').filter((x) => x && x !== '.').join('/');
        if (!name || name.split('/').includes('..')) throw new Error(`cannot write ${s}: write under /mnt/out/, e.g. writeFile('/mnt/out/result.csv', text)`);
        let bytes;
        if (typeof data === 'string') bytes = encode(data);
        else if (data instanceof ArrayBuffer) bytes = new Uint8Array(data.slice(0));
        else if (isView(data)) bytes = new Uint8Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
        else bytes = encode(String(data));
        const previous = written.has(name) ? written.get(name).byteLength : 0;
        if (!written.has(name) && written.size >= limits.max_artifacts) throw new RangeError(`at most ${limits.max_artifacts} files can be written to /mnt/out`);
        if (writtenBytes - previous + bytes.byteLength > limits.max_artifact_bytes) throw new RangeError(`files written to /mnt/out may total at most ${limits.max_artifact_bytes} bytes`);
        writtenBytes += bytes.byteLength - previous;
        written.set(name, bytes);
        return bytes.byteLength;
      },
    };
    for (const [name, value] of Object.entries(globals)) {
      defineProperty(self, name, { value, writable: true, configurable: true, enumerable: false });
    }
    listen('unhandledrejection', (e) => {
      e.preventDefault();
      stderr.push(`Uncaught (in promise) ${inspect(e.reason, 0, new Set(), false)}\n`);
    });
    listen('error', (e) => {
      e.preventDefault();
      stderr.push(`Uncaught ${e.message}\n`);
    });

    const outcome = { status: 'completed', value: null, value_repr: null, error: null };
    let offset = 0;
    try {
      const evaluated = evaluate(m.code);
      offset = evaluated.offset;
      let value = evaluated.value;
      if (value !== null && (typeof value === 'object' || typeof value === 'function') && typeof value.then === 'function') {
        value = await value;
      }
      if (Canvas && value instanceof Canvas) {
        // Returned, a canvas is the picture it holds: a PNG under /mnt/out,
        // which the result card shows.
        const png = new Uint8Array(await blobBytes(await canvasToBlob(value, { type: 'image/png' })));
        let name = 'canvas.png';
        for (let n = 2; written.has(name); n += 1) name = `canvas-${n}.png`;
        globals.writeFile(name, png);
        outcome.value_repr = `a ${value.width}×${value.height} canvas, saved as /mnt/out/${name}`;
        value = undefined;
      }
      if (value !== undefined) {
        outcome.value_repr = inspect(value, 0, new Set(), false);
        try {
          outcome.value = toJson(clone(value));
        } catch (_) {
          outcome.value = null; // not structured-clonable: only the printed form
        }
      }
    } catch (thrown) {
      lastThrown = thrown instanceof EvalFailure ? thrown.error : thrown;
      outcome.status = 'error';
      outcome.error = thrown instanceof EvalFailure
        ? describeError(thrown.error, thrown.offset, thrown.syntax)
        : describeError(thrown, offset, null);
    }
    const artifacts = [...written].map(([name, bytes]) => ({ name, bytes }));
    post({
      kind: 'result',
      nonce: secret,
      id: m.id,
      outcome: {
        ...outcome,
        stdout: stdout.text,
        stdout_dropped: stdout.dropped,
        stderr: stderr.text,
        stderr_dropped: stderr.dropped,
        artifacts,
      },
    }, artifacts.map((a) => a.bytes.buffer));
  };

  listen('message', (e) => {
    const m = e.data;
    if (!e.isTrusted || !m || typeof m !== 'object') return;
    if (m.kind === 'boot' && secret === null) {
      secret = String(m.nonce);
    } else if (m.kind === 'run' && secret !== null && !started) {
      started = true;
      (async () => {
        try {
          await run(m);
        } catch (_) {
          fallback(m.id);
        }
      })();
    }
  });
})();
