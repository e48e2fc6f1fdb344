// The JavaScript attack corpus against the sandbox of a build served by a
// plain static server (no CSP, no COOP/COEP, no proxy), on a first visit:
// the sandbox's own policy is all there is, and it must hold.
import { attackSuite } from '../support/attacks.mjs';
import { javascriptAttacks } from '../fixtures/attacks/javascript.mjs';

attackSuite({
  language: 'JavaScript',
  skill: 'run_javascript',
  attacks: javascriptAttacks,
  sanity: [['run_javascript', { code: '6 * 7' }, '42']],
  screenshot: 'sandbox-attacks-javascript-static',
  host: 'static',
});
