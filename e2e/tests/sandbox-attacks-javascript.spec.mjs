// The JavaScript attack corpus, run through the command bar against the
// real sandbox.
import { attackSuite } from '../support/attacks.mjs';
import { javascriptAttacks } from '../fixtures/attacks/javascript.mjs';

attackSuite({
  language: 'JavaScript',
  skill: 'run_javascript',
  attacks: javascriptAttacks,
  sanity: [['run_javascript', { code: '6 * 7' }, '42']],
  screenshot: 'sandbox-attacks-javascript',
});
