// The Python attack corpus, run through the command bar against the real
// sandbox; Python reaches JavaScript through Pyodide's bridge.
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
  screenshot: 'sandbox-attacks-python',
});
