// The Python attack corpus against the sandbox of a build served by a plain
// static server (no CSP, no COOP/COEP, no proxy), on a later visit: the
// service worker has added cross-origin isolation, so runaway loops are
// interrupted as under `hearth serve`; the sandbox's own policy is all
// that keeps it off the network, and it must hold.
import { attackSuite } from '../support/attacks.mjs';
import { pythonAttacks } from '../fixtures/attacks/python.mjs';

attackSuite({
  language: 'Python',
  skill: 'run_python',
  attacks: pythonAttacks,
  sanity: [
    ['run_javascript', { code: '6 * 7' }, '42'],
    ['run_python', { code: 'print(6 * 7)' }, '42'],
  ],
  screenshot: 'sandbox-attacks-python-static',
  host: 'static',
  underWorker: true,
});
