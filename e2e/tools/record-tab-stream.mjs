// Records real streams of the model in the tab for core's decoder tests
// (crates/core/tests/fixtures/streams/in_tab_*.jsonl): the app's worker
// running the real test model (SmolLM2-135M-Instruct, Q4_0) with Hearth's
// llama.cpp engine in headless Chromium, each line exactly as the worker
// sent it.
//
//   in_tab_text.jsonl   a plain answer (the model's own chat template).
//   in_tab_tools.jsonl  a tool call: the same model given a chat template
//                       that renders tools and `<tool_call>` tags (its own
//                       has none), shown a few calls of `discover_skills`
//                       in the history, then asked something new; the
//                       engine (llama.cpp's chat code) constrains it with
//                       the tool grammar and turns its `<tool_call>` into
//                       tool-call chunks.
//
// Run once after a build (`cargo xtask build`, `cargo xtask llama`):
//   node e2e/tools/record-tab-stream.mjs
import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromiumLaunchOptions, hearthBin, hearthDist, repoRoot } from '../support/env.mjs';

const MODEL = process.env.HEARTH_TEST_MODEL || path.join(repoRoot, '.test-fixtures', 'models', 'SmolLM2-135M-Instruct.Q4_0.gguf');
const OUT = path.join(repoRoot, 'crates', 'core', 'tests', 'fixtures', 'streams');

// ChatML with tools: the tool list in the system turn, calls as
// <tool_call>{"name", "arguments"}</tool_call>, results as tool_response.
const TOOL_TEMPLATE = `{%- if tools %}<|im_start|>system
{% if messages[0]['role'] == 'system' %}{{ messages[0]['content'] }}
{% endif %}You can call functions. Their signatures, as JSON, are inside <tools></tools>:
<tools>
{% for tool in tools %}{{ tool | tojson }}
{% endfor %}</tools>
To call one, answer with a JSON object holding its name and arguments inside <tool_call></tool_call> tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call><|im_end|>
{% elif messages[0]['role'] == 'system' %}<|im_start|>system
{{ messages[0]['content'] }}<|im_end|>
{% endif %}
{%- for message in messages %}
{%- if message['role'] == 'system' %}
{%- elif message['role'] == 'tool' %}<|im_start|>user
<tool_response>
{{ message['content'] }}
</tool_response><|im_end|>
{% elif message['role'] == 'assistant' and message['tool_calls'] %}<|im_start|>assistant
{% if message['content'] %}{{ message['content'] }}
{% endif %}{% for call in message['tool_calls'] %}<tool_call>
{"name": "{{ call['function']['name'] }}", "arguments": {% if call['function']['arguments'] is string %}{{ call['function']['arguments'] }}{% else %}{{ call['function']['arguments'] | tojson }}{% endif %}}
</tool_call>
{% endfor %}<|im_end|>
{% else %}<|im_start|>{{ message['role'] }}
{{ message['content'] }}<|im_end|>
{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif %}`;

const DISCOVER = {
  type: 'function',
  function: {
    name: 'discover_skills',
    description: 'Find the skills that can do something, by a few words describing it; the ones found are loaded.',
    parameters: {
      type: 'object',
      properties: { query: { type: 'string', description: 'What the skill should do' } },
      required: ['query'],
    },
  },
};

function fewShot(question) {
  const examples = [
    ['What is 2 plus 2?', '2 plus 2 is 4.'],
    ['What is 9 times 7?', '9 times 7 is 63.'],
    ['What is 100 minus 58?', '100 minus 58 is 42.'],
  ];
  const messages = [{ role: 'system', content: 'You are a helpful assistant. For arithmetic, call discover_skills to load the calculator.' }];
  examples.forEach(([q, answer], i) => {
    messages.push({ role: 'user', content: q });
    messages.push({
      role: 'assistant',
      content: '',
      tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: 'discover_skills', arguments: JSON.stringify({ query: 'calculator' }) } }],
    });
    messages.push({ role: 'tool', tool_call_id: `call_${i}`, content: 'Loaded Calculator' });
    messages.push({ role: 'assistant', content: answer });
  });
  messages.push({ role: 'user', content: question });
  return messages;
}

const port = 9090 + Math.floor(Math.random() * 100);
const server = spawn(hearthBin, ['serve', '--host', '127.0.0.1', '--port', String(port), '--dist', hearthDist], { stdio: 'ignore' });
const base = `http://127.0.0.1:${port}`;
for (let i = 0; i < 100; i++) {
  try { if ((await fetch(`${base}/healthz`)).ok) break; } catch { /* not up yet */ }
  await new Promise((r) => setTimeout(r, 100));
}
const browser = await chromium.launch(chromiumLaunchOptions());
try {
  const page = await browser.newPage();
  page.on('console', (m) => console.error('console:', m.text().slice(0, 400)));
  page.on('crash', () => console.error('the page crashed'));
  page.on('pageerror', (e) => console.error('pageerror:', e.message));
  await page.goto(`${base}/#/settings`);
  await page.waitForSelector('body[data-ready]');
  const panel = page.locator('.provider-panel');
  await panel.getByLabel('Provider').selectOption('in-tab');
  await panel.getByLabel('Model file', { exact: true }).setInputFiles(MODEL);
  await panel.locator('.tab-model').waitFor({ timeout: 300_000 });
  const model = await panel.locator('.tab-model').getAttribute('data-model');

  const record = (message) =>
    page.evaluate((m) => new Promise((resolve) => {
      const worker = (window.__rec ||= new Worker('/tabmodel/worker.js'));
      const lines = [];
      worker.onmessage = (e) => {
        if (e.data.id !== m.id) return;
        if (e.data.type === 'line') lines.push(e.data.line);
        if (e.data.type === 'done') resolve(lines);
      };
      worker.postMessage(m);
    }), message);

  const text = await record({
    type: 'chat', id: 1, model, context: 2048,
    body: { messages: [{ role: 'user', content: 'What is the capital of France?' }], max_tokens: 24, temperature: 0, timings_per_token: true, stream: true },
  });
  const tools = await record({
    type: 'chat', id: 2, model, context: 2048, chatTemplate: TOOL_TEMPLATE,
    body: { messages: fewShot('What is 17 times 23?'), tools: [DISCOVER], max_tokens: 40, temperature: 0, timings_per_token: true, stream: true },
  });
  const calls = tools.filter((l) => l.includes('"tool_calls"'));
  if (calls.length === 0) {
    const said = tools.map((l) => JSON.parse(l)).map((c) => c.choices?.[0]?.delta?.content || '').join('');
    throw new Error(`no tool-call chunks in the recording; the model wrote:\n${said}`);
  }
  fs.writeFileSync(path.join(OUT, 'in_tab_text.jsonl'), `${text.join('\n')}\n`);
  fs.writeFileSync(path.join(OUT, 'in_tab_tools.jsonl'), `${tools.join('\n')}\n`);
  console.log(`recorded ${text.length} and ${tools.length} lines (${calls.length} with tool calls) into ${OUT}`);
} finally {
  await browser.close();
  server.kill();
}
