// How a bench script hands its figures to `cargo xtask bench`: one line
// `BENCH {json}` per figure on stdout, which the harness collects into
// target/bench/results.json and the table in docs/benchmarks.md. The
// fields (see xtask/src/bench.rs, `Figure`):
//   figure  what was measured, unique in the run ("warm JS round trip")
//   value   a number, in `unit` ("ms", "KB", "×", "ops/s", ...)
//   goal    optional {max: n} or {min: n}, in the same unit
//   anchor  optional: the figure this one is a ratio against, measured in
//           the same run
//   detail  optional words: samples, n, p90

/// Prints one figure for the harness, and a readable line for people.
export function figure({ figure, value, unit, goal, anchor, detail }) {
  if (typeof figure !== 'string' || !Number.isFinite(value) || typeof unit !== 'string') {
    throw new Error(`a bench figure needs a name, a finite value and a unit: ${JSON.stringify({ figure, value, unit })}`);
  }
  const out = { figure, value, unit };
  if (goal) out.goal = goal;
  if (anchor) out.anchor = anchor;
  if (detail) out.detail = detail;
  console.log(`BENCH ${JSON.stringify(out)}`);
}

/// `measured` against `anchor` (two figures already printed in this run,
/// each {figure, value}) as a ratio figure.
export function ratio(name, measured, anchor, goal) {
  figure({ figure: name, value: measured.value / anchor.value, unit: '×', goal, anchor: anchor.figure });
}

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

export const p90 = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * 0.9))];
};
