// The page reader against Mozilla Readability: for each page of a corpus of
// real HTML nobody here wrote (Debian's python3-doc, rust-doc and
// debian-reference-en, and the saved pages trafilatura's PyPI sdist ships for
// its tests; `cargo xtask bench` installs them), the text `hearth web read
// --json` gives is compared with the text Readability (in jsdom) extracts,
// by word-level F1. Prints one row per page, the median and the worst five,
// and each page's F1 beside the reader this one replaced (its figures were
// measured with this script's word count on that reader's output, before
// it was deleted, and are kept in reader-baseline.json).
//
// Env: HEARTH_BIN (the hearth binary), READER_CORPUS (the folder xtask put
// trafilatura's pages in). `--write-baseline FILE` writes this run's F1 per
// page to FILE; `--json FILE` writes the whole result.

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { JSDOM, VirtualConsole } from 'jsdom';
import { Readability } from '@mozilla/readability';
import { figure } from './figures.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const hearth = process.env.HEARTH_BIN;
const saved = process.env.READER_CORPUS;
if (!hearth || !saved) {
  console.error('set HEARTH_BIN and READER_CORPUS');
  process.exit(2);
}

const python = '/usr/share/doc/python3-doc/html';
const rust = '/usr/share/doc/rust-doc/html';
const debref = '/usr/share/debian-reference';

// Page id -> file. Ids are stable across machines; the files come from the
// packages named above.
const corpus = [
  ...['library/json', 'library/re', 'library/pathlib', 'library/argparse', 'library/itertools',
    'library/functools', 'library/collections', 'library/datetime', 'library/subprocess',
    'library/unittest', 'tutorial/controlflow', 'tutorial/datastructures', 'tutorial/classes',
    'tutorial/errors', 'howto/sorting', 'howto/regex'].map((p) => [`python3-doc/${p}`, `${python}/${p}.html`]),
  ...['book/ch04-01-what-is-ownership', 'book/ch08-02-strings', 'book/ch10-02-traits',
    'book/ch15-01-box', 'book/ch16-01-threads', 'rust-by-example/hello', 'nomicon/ownership',
    'reference/types', 'edition-guide/introduction', 'rustc/what-is-rustc',
    'std/vec/struct.Vec'].map((p) => [`rust-doc/${p}`, `${rust}/${p}.html`]),
  ...['pr01', 'ch03', 'ch04', 'ch05', 'ch08', 'apa'].map((p) => [`debian-reference/${p}`, `${debref}/${p}.en.html`]),
  ...['apache', 'http_sample', 'httpbin_sample', 'mozilla.org.firefox.developer', 'scam', 'utf8',
    'webpage'].map((p) => [`trafilatura/${p}`, join(saved, `${p}.html`)]),
];

/// Lower-case words (letters and digits). Markdown's own syntax is left
/// out: link targets, and the language name after a code fence (it comes
/// from a class attribute, not from the page's text).
function words(text) {
  const noTargets = text.replace(/\]\((?:[^()\s]|\([^)]*\))*\)/g, ']');
  const noFenceInfo = noTargets.replace(/^([ \t]*(?:`{3,}|~{3,}))[^`\n]*$/gm, '$1');
  return noFenceInfo.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

function f1(ours, reference) {
  if (ours.length === 0 && reference.length === 0) return 1;
  const counts = new Map();
  for (const w of reference) counts.set(w, (counts.get(w) ?? 0) + 1);
  let common = 0;
  for (const w of ours) {
    const n = counts.get(w) ?? 0;
    if (n > 0) {
      common += 1;
      counts.set(w, n - 1);
    }
  }
  if (common === 0) return 0;
  const precision = common / ours.length;
  const recall = common / reference.length;
  return (2 * precision * recall) / (precision + recall);
}

function readability(html, url) {
  const virtualConsole = new VirtualConsole();
  const dom = new JSDOM(html, { url, virtualConsole });
  const article = new Readability(dom.window.document).parse();
  dom.window.close();
  return article?.textContent ?? null;
}

function ours(file) {
  const out = execFileSync(hearth, ['web', 'read', '--json', '--max-bytes', '10485760', file], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, HEARTH_CONFIG_DIR: join(saved, 'no-config') },
  });
  const page = JSON.parse(out);
  return { content: page.content, ms: 0 };
}

const args = process.argv.slice(2);
const option = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : null;
};
const baselinePath = join(here, 'reader-baseline.json');
const baseline = existsSync(baselinePath) ? JSON.parse(readFileSync(baselinePath, 'utf8')) : {};

const rows = [];
const missing = [];
for (const [id, file] of corpus) {
  if (!existsSync(file)) {
    missing.push(id);
    continue;
  }
  const html = readFileSync(file, 'utf8');
  const reference = readability(html, `file://${file}`);
  if (reference === null) {
    missing.push(`${id} (Readability found no article)`);
    continue;
  }
  const started = performance.now();
  const { content } = ours(file);
  const ms = performance.now() - started;
  const refWords = words(reference);
  const ourWords = words(content);
  rows.push({
    id,
    f1: f1(ourWords, refWords),
    before: baseline[id] ?? null,
    reference_words: refWords.length,
    our_words: ourWords.length,
    ms,
  });
}

const fmt = (x) => (x === null ? '   —  ' : x.toFixed(3).padStart(6));
console.log(`reader quality: word-level F1 against Mozilla Readability ${'(jsdom)'}, ${rows.length} pages`);
console.log(`  ${'page'.padEnd(44)} ${'F1'.padStart(6)} ${'before'.padStart(6)} ${'ref words'.padStart(9)} ${'our words'.padStart(9)}`);
for (const r of rows) {
  console.log(`  ${r.id.padEnd(44)} ${fmt(r.f1)} ${fmt(r.before)} ${String(r.reference_words).padStart(9)} ${String(r.our_words).padStart(9)}`);
}
const sorted = [...rows].sort((a, b) => a.f1 - b.f1);
const median = (xs) => {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const med = median(rows.map((r) => r.f1));
const withBefore = rows.filter((r) => r.before !== null);
const medBefore = median(withBefore.map((r) => r.before));
const worse = withBefore.filter((r) => r.f1 < r.before - 0.005);
console.log(`  median F1: ${med.toFixed(3)} (goal >= 0.9); the replaced reader on the same pages: ${withBefore.length ? medBefore.toFixed(3) : 'not measured'}`);
console.log(`  worst five: ${sorted.slice(0, 5).map((r) => `${r.id} ${r.f1.toFixed(3)}`).join(', ')}`);
console.log(`  pages worse than the replaced reader (by more than 0.005): ${worse.length ? worse.map((r) => `${r.id} ${r.f1.toFixed(3)} < ${r.before.toFixed(3)}`).join(', ') : 'none'}`);
if (missing.length) console.log(`  not compared: ${missing.join(', ')}`);
figure({ figure: 'reader: median word-level F1 against Readability', value: med, unit: 'F1', goal: { min: 0.9 }, detail: `${rows.length} pages; worst ${sorted[0]?.id} ${sorted[0]?.f1.toFixed(3)}` });
if (withBefore.length) {
  figure({ figure: 'reader: pages worse than the replaced reader', value: worse.length, unit: 'pages', goal: { max: 0 }, detail: worse.map((r) => r.id).join(', ') || 'none' });
}

const write = option('--write-baseline');
if (write) {
  writeFileSync(write, JSON.stringify(Object.fromEntries(rows.map((r) => [r.id, Number(r.f1.toFixed(4))])), null, 2) + '\n');
  console.log(`  wrote ${write}`);
}
const json = option('--json');
if (json) {
  writeFileSync(json, JSON.stringify({ median: med, median_before: medBefore, worst: sorted.slice(0, 5), worse, rows, missing }, null, 2) + '\n');
}
if (rows.length < 30) {
  console.error(`only ${rows.length} pages could be compared; the corpus needs at least 30`);
  process.exit(1);
}
