// Events per second through agent-loopguard's native observe, beside the same events sent to
// the sidecar (`loopguard serve --stdio`) from Node with one pipe round trip per event.
//
//   node bench.mjs [--events N] [--repeats R] [--loopguard PATH] [--min-ratio X]
//
// Both paths do what a host does per event: the native one passes an object to `observe`
// (and, separately, calls the typed helpers); the sidecar one serialises the event as a JSON
// line, writes it, awaits the answer line and parses it. Prints events/s for each and the
// ratio; with --min-ratio, exits 1 when native/sidecar is below it.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

import { Guard } from 'agent-loopguard';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : fallback;
}

/** An agent at work: streamed messages, then a tool call and its result, varied. */
function sessionEvents(n) {
  const events = [{ type: 'user', text: 'fix the failing test', origin: 'human' }];
  for (let step = 0; events.length < n; step++) {
    events.push({ type: 'message_start' });
    for (const part of ['Looking at ', `module ${step} `, 'next.']) {
      events.push({ type: 'text_delta', stream: 'text', delta: part });
    }
    events.push({ type: 'message_end' });
    const tool = ['read', 'grep', 'edit'][step % 3];
    events.push({ type: 'tool_call', id: `c${step}`, tool, args: { path: `src/m${step}.rs`, line: step } });
    events.push({ type: 'tool_result', id: `c${step}`, tool, content: `result ${step}\n`.repeat(4) });
  }
  return events.slice(0, n);
}

function helper(g, e) {
  switch (e.type) {
    case 'tool_call': return g.toolCall(e.id, e.tool, e.args);
    case 'tool_result': return g.toolResult(e.id, e.tool, e.content);
    case 'text_delta': return g.textDelta(e.delta, e.stream);
    case 'message_start': return g.messageStart();
    case 'message_end': return g.messageEnd();
    default: return g.user(e.text, e.origin);
  }
}

async function bestRate(run, n, repeats) {
  let best = Infinity;
  for (let r = 0; r < repeats; r++) {
    const t0 = process.hrtime.bigint();
    await run();
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9);
  }
  return n / best;
}

const n = Number(arg('events', '40000'));
const repeats = Number(arg('repeats', '5'));
const minRatio = arg('min-ratio', null);
const targetDir = process.env.CARGO_TARGET_DIR ?? join(root, 'target');
const binary = arg('loopguard', process.env.LOOPGUARD_BIN ?? join(targetDir, 'release', 'loopguard'));
if (!existsSync(binary)) {
  console.error(`no sidecar binary at ${binary}: \`cargo build --release -p loopguard-cli\``);
  process.exit(2);
}

const events = sessionEvents(n);

const native = () => {
  const g = new Guard('default');
  for (const e of events) g.observe(e);
};
const helpers = () => {
  const g = new Guard('default');
  for (const e of events) helper(g, e);
};

const child = spawn(binary, ['serve', '--stdio'], { stdio: ['pipe', 'pipe', 'inherit'] });
const waiting = [];
createInterface({ input: child.stdout }).on('line', (line) => waiting.shift()?.(line));
const roundTrip = (line) =>
  new Promise((resolve) => {
    waiting.push(resolve);
    child.stdin.write(line + '\n');
  });
let runNo = 0;
const sidecar = async () => {
  const session = `bench-${++runNo}`;
  for (const e of events) {
    const answer = JSON.parse(await roundTrip(JSON.stringify({ ...e, session })));
    if (answer.error) throw new Error(JSON.stringify(answer));
  }
};

const nativeRate = await bestRate(native, n, repeats);
const helperRate = await bestRate(helpers, n, repeats);
const sidecarRate = await bestRate(sidecar, n, repeats);
child.stdin.end();
const ratio = nativeRate / sidecarRate;
const fmt = (x) => Math.round(x).toLocaleString('en-US').padStart(12);
console.log(`node ${process.version}, ${n} events, best of ${repeats}`);
console.log(`node native observe(object)      ${fmt(nativeRate)} events/s`);
console.log(`node native typed helpers        ${fmt(helperRate)} events/s`);
console.log(`node sidecar (pipe round trip)   ${fmt(sidecarRate)} events/s`);
console.log(`node ratio native/sidecar        ${ratio.toFixed(1).padStart(12)}x`);
if (minRatio !== null && ratio < Number(minRatio)) {
  console.error(`ratio ${ratio.toFixed(1)} is below ${minRatio}`);
  process.exitCode = 1;
}
