// Highlighted code and math in headless Chromium: what highlight.js costs
// per 1,000 lines (Rust, Python, TypeScript; median of 15 runs each), what
// Temml costs per formula, and the size (raw and gzip) of the two files
// loaded on demand. Figures, not assertions.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { chromiumLaunchOptions, hearthDist } from '../support/env.mjs';
import { figure } from './figures.mjs';

const files = ['highlight.min.js', 'temml.min.js'].map((name) => path.join(hearthDist, 'vendor', name));
for (const f of files) {
  if (!fs.existsSync(f)) {
    console.error(`${f} is missing; run cargo xtask build`);
    process.exit(1);
  }
}

// 1,000 lines of each language, made from a few realistic lines.
const samples = {
  rust: [
    'pub fn area(shape: &Shape) -> f64 {',
    '    match shape { Shape::Circle { r } => std::f64::consts::PI * r * r, _ => 0.0 }',
    '}',
    '// A comment with a "string" inside',
    'let names: Vec<String> = items.iter().map(|i| i.name.to_string()).collect();',
  ],
  python: [
    'def area(shape):',
    '    """Return the area of a shape."""',
    '    if shape.kind == "circle":',
    '        return math.pi * shape.r ** 2  # circle',
    '    return sum(x * 2 for x in range(10))',
  ],
  typescript: [
    'export async function load(url: string): Promise<Note[]> {',
    '  const res = await fetch(`${base}/notes?q=${encodeURIComponent(url)}`);',
    '  if (!res.ok) throw new Error("failed: " + res.status); // status',
    '  return (await res.json()).map((n: Note) => ({ ...n, done: false }));',
    '}',
  ],
};
const thousand = (lines) => Array.from({ length: 1000 }, (_, i) => lines[i % lines.length]).join('\n') + '\n';
const formulas = [
  'x^2 + y^2 = z^2',
  '\\sum_{i=1}^{n} i = \\frac{n(n+1)}{2}',
  '\\int_0^\\infty e^{-x^2}\\,dx = \\frac{\\sqrt{\\pi}}{2}',
  '\\begin{pmatrix} a & b \\\\ c & d \\end{pmatrix}',
  'f(x) = \\left\\{ \\begin{array}{ll} x & x > 0 \\\\ -x & \\text{otherwise} \\end{array} \\right.',
];

const browser = await chromium.launch(chromiumLaunchOptions());
try {
  const page = await browser.newPage();
  await page.setContent('<!doctype html><title>bench</title>');
  for (const f of files) await page.addScriptTag({ path: f });
  console.log('highlighted code and math (headless Chromium)');
  for (const [language, lines] of Object.entries(samples)) {
    const code = thousand(lines);
    const ms = await page.evaluate(({ code, language }) => {
      const runs = [];
      for (let i = 0; i < 15; i++) {
        const t = performance.now();
        hljs.highlight(code, { language, ignoreIllegals: true });
        runs.push(performance.now() - t);
      }
      runs.sort((a, b) => a - b);
      return runs[7];
    }, { code, language });
    console.log(`  highlight.js, 1,000 lines of ${language.padEnd(10)} ${ms.toFixed(2).padStart(8)} ms (median of 15)`);
    figure({ figure: `highlight.js, 1,000 lines of ${language}`, value: ms, unit: 'ms', detail: 'median of 15' });
  }
  const perFormula = await page.evaluate((formulas) => {
    const runs = [];
    for (let i = 0; i < 20; i++) {
      const t = performance.now();
      for (const f of formulas) temml.renderToString(f, { displayMode: true, throwOnError: true });
      runs.push((performance.now() - t) / formulas.length);
    }
    runs.sort((a, b) => a - b);
    return runs[10];
  }, formulas);
  console.log(`  Temml, one formula to MathML                 ${perFormula.toFixed(3).padStart(8)} ms (median of 20 x ${formulas.length})`);
  figure({ figure: 'Temml, one formula to MathML', value: perFormula, unit: 'ms', detail: `median of 20 x ${formulas.length}` });
  for (const f of files) {
    const bytes = fs.readFileSync(f);
    const gz = zlib.gzipSync(bytes, { level: 9 }).length;
    console.log(`  ${path.basename(f).padEnd(44)} ${(bytes.length / 1024).toFixed(1).padStart(8)} KB raw ${(gz / 1024).toFixed(1).padStart(7)} KB gzip (loaded on demand)`);
    figure({ figure: `${path.basename(f)}, loaded on demand (gzip)`, value: gz / 1024, unit: 'KB', detail: `${(bytes.length / 1024).toFixed(1)} KB raw` });
  }
} finally {
  await browser.close();
}
