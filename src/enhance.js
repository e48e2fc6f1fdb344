// The page half of highlighted code and math: loads highlight.js and Temml
// (copied from npm into /vendor/ by the build and precached by the service
// worker) the first time a reply needs them, and answers one block or
// formula at a time. Their answers are markup the Rust side checks before
// it is shown (hearth_markdown::safe).

const loading = new Map();

function load(src, global) {
  if (globalThis[global]) return Promise.resolve(globalThis[global]);
  if (!loading.has(src)) {
    const promise = new Promise((resolve, reject) => {
      const script = document.createElement('script');
      script.src = src;
      script.async = true;
      script.onload = () =>
        globalThis[global] ? resolve(globalThis[global]) : reject(new Error(`${src} did not define ${global}`));
      script.onerror = () => reject(new Error(`cannot load ${src}`));
      document.head.append(script);
    });
    // A failed load (offline before the first visit cached it) may be
    // tried again later.
    promise.catch(() => loading.delete(src));
    loading.set(src, promise);
  }
  return loading.get(src);
}

// Highlighted HTML for `code`, or null when highlight.js has no such
// language. Rejects when the highlighter cannot be loaded.
export async function highlightCode(language, code) {
  const hljs = await load('/vendor/highlight.min.js', 'hljs');
  if (!hljs.getLanguage(language)) return null;
  return hljs.highlight(code, { language, ignoreIllegals: true }).value;
}

// MathML for `tex`, or null when it is not LaTeX Temml reads. Rejects when
// the converter cannot be loaded.
export async function mathToMathml(tex, display) {
  const temml = await load('/vendor/temml.min.js', 'temml');
  try {
    return temml.renderToString(tex, { displayMode: display, throwOnError: true });
  } catch {
    return null;
  }
}
