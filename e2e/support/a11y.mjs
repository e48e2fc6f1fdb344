// The accessibility audit: axe-core (npm) run inside the page on what is
// on screen, with every rule axe ships enabled.
import fs from 'node:fs';
import { createRequire } from 'node:module';

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/// The serious and critical violations axe finds on the page as it is now,
/// each as { rule, impact, help, nodes: [{ target, summary }] }. Elements
/// hidden from everyone (display: none, visibility: hidden) are not
/// checked, as axe does by default.
export async function seriousViolations(page) {
  const loaded = await page.evaluate(() => typeof window.axe !== 'undefined');
  // Evaluated through the DevTools protocol: the app's Content-Security-
  // Policy rightly refuses an injected <script>.
  if (!loaded) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const result = await window.axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({
      rule: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({
        target: n.target.join(' '),
        summary: (n.failureSummary || '').split('\n').slice(1).join(' ').trim(),
      })),
    }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}
