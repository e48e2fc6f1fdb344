// The accessibility audit: axe-core (npm) injected into the page, run on
// what is on screen, reporting the serious and critical violations.
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from './env.mjs';

const axeSource = fs.readFileSync(path.join(repoRoot, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

/// Runs axe on the page as it is, and returns its serious and critical
/// violations in a form that reads well in a failed assertion.
export async function seriousViolations(page) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) {
    // Evaluated through the DevTools protocol, so the app's CSP stays as it is.
    await page.evaluate(axeSource);
  }
  return page.evaluate(async () => {
    const result = await window.axe.run(document, { resultTypes: ['violations'] });
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => ({
        rule: v.id,
        impact: v.impact,
        help: v.help,
        nodes: v.nodes.slice(0, 6).map((n) => `${n.target.join(' ')}: ${(n.failureSummary || '').split('\n').slice(1, 3).join(' ')}`),
      }));
  });
}
