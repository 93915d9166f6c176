// The agent-loopguard package: the README example, errors, snapshots, a scripted loop, and
// the TypeScript example (compiled by `tsc -p .` into build/).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { Action, Guard, presets } from 'agent-loopguard';

const here = dirname(fileURLToPath(import.meta.url));
const pkg = join(here, '..');
const root = join(pkg, '..', '..');
const build = join(pkg, 'build');

/** The model reads the same file n times; blocked calls get the guard's reason back. */
function identicalReads(guard, n) {
  const verdicts = [];
  for (let i = 0; i < n; i++) {
    const v = guard.toolCall(`c${i}`, 'read', { path: 'src/main.rs' });
    verdicts.push(v);
    if (v.action === Action.ABORT) break;
    if (v.action === Action.BLOCK) guard.toolResult(`c${i}`, 'read', v.message ?? '', true);
    else verdicts.push(guard.toolResult(`c${i}`, 'read', 'fn main() {}'));
    guard.messageStart();
    guard.messageEnd();
  }
  return verdicts;
}

function tsBlocks(markdown) {
  return [...readFileSync(markdown, 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);
}

test('the README examples run and type-check', () => {
  const blocks = [join(root, 'README.md'), join(pkg, 'README.md')].flatMap(tsBlocks);
  assert.ok(blocks.length >= 2, 'both READMEs carry a TypeScript example');
  mkdirSync(build, { recursive: true });
  blocks.forEach((code, i) => {
    // Written inside the package so that `import ... from "agent-loopguard"` resolves to it.
    const file = join(build, `readme-${i}.mts`);
    writeFileSync(file, code);
  });
  const tsc = join(pkg, 'node_modules', '.bin', 'tsc');
  if (existsSync(tsc)) {
    const args = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext',
      '--target', 'es2022', '--types', 'node', ...blocks.map((_, i) => join(build, `readme-${i}.mts`))];
    execFileSync(tsc, args, { cwd: pkg, stdio: 'inherit' });
  } else {
    assert.notEqual(process.env.CI, 'true', 'tsc is required under CI (npm ci in bindings/node)');
  }
  // The blocks carry no type annotations, so they also run as plain ES modules.
  return Promise.all(
    blocks.map((code, i) => {
      const file = join(build, `readme-${i}.mjs`);
      writeFileSync(file, code);
      return import(pathToFileURL(file).href);
    }),
  );
});

test('a scripted loop is steered, then blocked, then aborted', () => {
  const verdicts = identicalReads(new Guard('default'), 30);
  const actions = verdicts.map((v) => v.action);
  const first = (a) => actions.indexOf(a);
  assert.ok(first(Action.STEER) >= 0 && first(Action.STEER) < first(Action.BLOCK), actions.join());
  assert.ok(first(Action.BLOCK) < first(Action.ABORT), actions.join());
  assert.ok(actions.slice(0, first(Action.STEER)).every((a) => a === Action.CONTINUE));
  const block = verdicts[first(Action.BLOCK)];
  assert.equal(block.code, 'tool_loop:generic-repeat');
  assert.match(block.message, /read/);
  assert.equal(block.findings[0].detector, 'generic-repeat');
  assert.equal(block.findings[0].level, 'critical');
  assert.ok(block.findings[0].evidence.length > 0);
  assert.equal(typeof block.wholeBatch, 'boolean');
  const abort = verdicts[first(Action.ABORT)];
  assert.match(abort.code, /^loop_aborted:/);
  const steer = verdicts[first(Action.STEER)];
  assert.ok(steer.message && ['now', 'at_settle'].includes(steer.deliver));
  const pass = verdicts[0];
  assert.ok(!('message' in pass) && !('code' in pass), JSON.stringify(pass));
  assert.deepEqual(pass.findings, []);
});

test('varied work is never interrupted', () => {
  const g = new Guard();
  g.user('refactor the parser', 'human');
  for (let i = 0; i < 40; i++) {
    assert.equal(g.toolCall(`c${i}`, 'read', { path: `src/file${i}.rs` }).action, Action.CONTINUE);
    assert.equal(g.toolResult(`c${i}`, 'read', `contents of file ${i}`).action, Action.CONTINUE);
  }
  assert.equal(g.seq, 81);
});

test('sidecar-shaped objects and typed helpers agree', () => {
  const a = new Guard();
  const b = new Guard();
  const args = { q: 'x', n: [1, 2.5, null, true] };
  const lines = [
    { session: 's1', type: 'user', text: 'go', origin: 'human' },
    { type: 'message_start' },
    { type: 'text_delta', stream: 'thinking', delta: 'hm' },
    { type: 'message_end' },
  ];
  const helpers = [() => b.user('go', 'human'), () => b.messageStart(),
    () => b.textDelta('hm', 'thinking'), () => b.messageEnd()];
  for (let i = 0; i < 8; i++) {
    lines.push({ type: 'tool_call', id: `c${i}`, tool: 'grep', args });
    lines.push({ type: 'tool_result', id: `c${i}`, tool: 'grep', content: 'none' });
    helpers.push(() => b.toolCall(`c${i}`, 'grep', args), () => b.toolResult(`c${i}`, 'grep', 'none'));
  }
  const got = lines.map((l, i) => (i % 2 ? a.observe(l) : a.observeJson(JSON.stringify(l))));
  assert.deepEqual(got, helpers.map((h) => h()));
  assert.ok(got.some((v) => v.action !== Action.CONTINUE), 'eight identical greps draw a verdict');
});

test('an assistant object is one whole message', () => {
  const g = new Guard();
  const v = g.observe({ type: 'assistant', text: 'I will check the file again. '.repeat(60) });
  assert.notEqual(v.action, Action.CONTINUE);
  assert.equal(g.seq, 3);
  assert.equal(g.assistant('fine', 'ok').action, Action.CONTINUE);
  assert.equal(g.seq, 7);
});

test('errors carry the Rust message and a code', () => {
  const throwsWith = (fn, code, re) =>
    assert.throws(fn, (e) => e instanceof Error && e.code === code && re.test(e.message));
  throwsWith(() => new Guard('nope'), 'LOOPGUARD_CONFIG', /unknown preset `nope`/);
  throwsWith(() => Guard.fromConfig('[guard\n'), 'LOOPGUARD_CONFIG', /invalid syntax/);
  throwsWith(() => Guard.fromConfigFile('/no-such-dir/lg.toml'), 'LOOPGUARD_CONFIG', /no-such-dir/);
  const g = new Guard();
  throwsWith(() => g.observe({ text: 'x' }), 'LOOPGUARD_EVENT', /missing field `type`/);
  throwsWith(() => g.observe({ type: 'tool_call', id: 'c' }), 'LOOPGUARD_EVENT',
    /`tool_call` event: missing field `tool`/);
  throwsWith(() => g.observe({ type: 'teleport' }), 'LOOPGUARD_EVENT', /unknown variant `teleport`/);
  throwsWith(() => g.observe({ type: 'control', command: 'reset' }), 'LOOPGUARD_EVENT', /sidecar commands/);
  throwsWith(() => g.observe([1, 2]), 'LOOPGUARD_EVENT', /must be an object/);
  throwsWith(() => g.observeJson('{oops'), 'LOOPGUARD_EVENT', /must be JSON/);
  throwsWith(() => g.textDelta('x', 'audio'), 'LOOPGUARD_EVENT', /unknown stream/);
  throwsWith(() => g.user('x', 'robot'), 'LOOPGUARD_EVENT', /unknown origin/);
  assert.throws(() => g.toolCall('c', 'read', { f: () => 1 }));
  assert.throws(() => g.observe('not an object'));
  throwsWith(() => Guard.restore(Buffer.from('{oops')), 'LOOPGUARD_STATE', /not a JSON snapshot/);
  throwsWith(() => Guard.restore(Buffer.from('{"version":999}')), 'LOOPGUARD_STATE', /version 999/);
  throwsWith(() => Guard.restore(g.snapshot(), { preset: 'default', config: '' }), 'LOOPGUARD_CONFIG',
    /at most one/);
  assert.equal(g.seq, 0, 'refused events never reach the guard');
});

test('configuration from TOML text and file', () => {
  const toml = '[detectors.generic-repeat]\nwarn-threshold = 2\nblock-threshold = 3\n';
  mkdirSync(build, { recursive: true });
  const file = join(build, 'strict.toml');
  writeFileSync(file, toml);
  const firstBlock = (g) => identicalReads(g, 20).findIndex((v) => v.action === Action.BLOCK);
  const a = firstBlock(Guard.fromConfig(toml));
  const b = firstBlock(Guard.fromConfigFile(file));
  const c = firstBlock(new Guard());
  assert.ok(a === b && a >= 0 && a < c, `${a} ${b} ${c}`);
});

test('snapshot and restore continue where the guard was', () => {
  const g = new Guard('default');
  identicalReads(g, 2);
  const state = g.snapshot();
  assert.ok(Buffer.isBuffer(state));
  const back = Guard.restore(state, { preset: 'default' });
  assert.equal(back.seq, g.seq);
  assert.deepEqual(identicalReads(back, 6), identicalReads(g, 6));
  assert.notDeepEqual(identicalReads(new Guard(), 6), identicalReads(Guard.restore(state), 6));
});

test('enabled, command, detectors and presets', () => {
  const g = new Guard();
  assert.ok(g.detectors().includes('generic-repeat'));
  assert.ok(['default', 'pi-loop-guard', 'openclaw'].every((p) => presets().includes(p)));
  g.enabled = false;
  assert.equal(g.enabled, false);
  assert.ok(identicalReads(g, 12).every((v) => v.action === Action.CONTINUE));
  assert.equal(g.command('/runaway on'), true);
  assert.equal(g.enabled, true);
  assert.equal(g.command('hello'), null);
  assert.ok(identicalReads(g, 12).some((v) => v.action !== Action.CONTINUE));
});

test('the package loads through require too', () => {
  const require = createRequire(import.meta.url);
  const cjs = require('agent-loopguard');
  assert.equal(cjs.Action.BLOCK, 'block');
  assert.equal(typeof cjs.Guard, 'function');
  assert.ok(Object.isFrozen(cjs.Action));
});

test('the TypeScript example: steered, blocked, aborted; healthy untouched; babble cut', async () => {
  const compiled = join(build, 'examples', 'agent-loop.mjs');
  if (!existsSync(compiled)) {
    assert.notEqual(process.env.CI, 'true', 'run `npx tsc -p .` in bindings/node first');
    return;
  }
  const ex = await import(pathToFileURL(compiled).href);
  const run = (model) => ex.runAgent(model, ex.TOOLS, new Guard('default'), 'What is in src/?');
  const healthy = run(ex.healthyModel());
  assert.equal(healthy.stopped, 'done');
  assert.equal(healthy.toolsRun, 3);
  assert.deepEqual([healthy.steers, healthy.blocked, healthy.cutText], [[], [], 0]);
  const stubborn = run(ex.stubbornModel());
  assert.equal(stubborn.stopped, 'aborted');
  assert.ok(stubborn.steers.length > 0);
  assert.ok(stubborn.blocked.length > 0 && stubborn.blocked.every((c) => c.startsWith('tool_loop:')));
  assert.match(stubborn.abortCode, /^loop_aborted:/);
  assert.ok(stubborn.messages.some((m) => m.role === 'user' && stubborn.steers.includes(m.content)));
  assert.ok(stubborn.messages.some((m) => m.role === 'tool' && m.isError));
  const babbling = run(ex.babblingModel());
  assert.equal(babbling.cutText, 1);
  assert.equal(babbling.stopped, 'aborted');
  const lines = [];
  ex.main((l) => lines.push(l));
  assert.deepEqual(lines.map((l) => l.split(' ')[0]), ['healthy', 'stubborn', 'babbling']);
});
