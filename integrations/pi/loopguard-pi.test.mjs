// Tests of loopguard-pi.mjs against a mocked Pi ExtensionAPI and the real sidecar binary.
// The binary: $LOOPGUARD_BIN, else target/debug/loopguard-sidecar, else target/debug/loopguard.
// When none exists the tests are skipped, except under CI=true, where that is a failure.

import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import loopguard, { SidecarClient, contentText } from "./loopguard-pi.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const candidates = process.env.LOOPGUARD_BIN
  ? [process.env.LOOPGUARD_BIN]
  : [join(root, "target/debug/loopguard-sidecar"), join(root, "target/debug/loopguard")];
const bin = candidates.find((p) => existsSync(p));
const ci = process.env.CI === "true";
const skip = bin ? false : `no sidecar binary (looked for ${candidates.join(", ")}); build it first`;

test("a sidecar binary is present under CI", { skip: !ci }, () => {
  assert.ok(bin, `CI=true but no sidecar binary at ${candidates.join(", ")}`);
});

/** A mocked ExtensionAPI: handlers by event, messages sent, and an emitter. */
function mockPi() {
  const handlers = new Map();
  const sent = [];
  return {
    sent,
    on(event, handler) {
      if (!handlers.has(event)) handlers.set(event, []);
      handlers.get(event).push(handler);
    },
    sendUserMessage(text, options) {
      sent.push({ text, options });
    },
    async emit(event, payload, ctx) {
      let result;
      for (const h of handlers.get(event) || []) {
        const r = await h(payload, ctx);
        if (r !== undefined && result === undefined) result = r;
      }
      return result;
    },
  };
}

function mockCtx() {
  return {
    aborts: 0,
    compactions: 0,
    abort() {
      this.aborts += 1;
    },
    compact(opts) {
      this.compactions += 1;
      opts?.onComplete?.();
    },
  };
}

function setup(extra = {}) {
  const pi = mockPi();
  const errors = [];
  const guard = loopguard(pi, { bin, session: `t-${Math.random()}`, onError: (e) => errors.push(e), ...extra });
  return { pi, guard, errors, ctx: mockCtx() };
}

/** Runs one tool call and its result through the extension; returns the tool_call answer. */
async function callTool(pi, ctx, i, name, input, output) {
  const id = `call_${i}`;
  const r = await pi.emit("tool_call", { toolCallId: id, toolName: name, input }, ctx);
  if (!r?.block) {
    await pi.emit("tool_result", { toolCallId: id, toolName: name, content: [{ type: "text", text: output }], isError: false }, ctx);
  }
  return r;
}

test("contentText joins text blocks and counts images", () => {
  assert.deepEqual(contentText([{ type: "text", text: "a" }, { type: "image" }, { type: "text", text: "b" }]), {
    text: "a\nb",
    images: 1,
  });
  assert.deepEqual(contentText("plain"), { text: "plain", images: 0 });
  assert.deepEqual(contentText(undefined), { text: "", images: 0 });
});

/** A client that records every answer of the real sidecar. */
class RecordingClient extends SidecarClient {
  constructor(options) {
    super(options);
    this.log = [];
  }
  async send(obj) {
    const answer = await super.send(obj);
    this.log.push({ sent: obj, answer });
    return answer;
  }
}

/** A stand-in for the sidecar that answers tool calls from a script of verdicts. */
class ScriptedClient {
  constructor(verdicts) {
    this.verdicts = verdicts;
    this.sent = [];
    this.onError = () => {};
  }
  async send(obj) {
    this.sent.push(obj);
    const v = obj.type === "tool_call" ? this.verdicts.shift() : undefined;
    return { session: obj.session, seq: this.sent.length - 1, action: "continue", message: null, terminate: false, findings: [], ...v };
  }
  close() {
    return Promise.resolve();
  }
}

test("verdicts are applied: block, terminate, steer now, steer at the settle point, compact, abort", async () => {
  const pi = mockPi();
  const ctx = mockCtx();
  const client = new ScriptedClient([
    {},
    { action: "block", message: "stop repeating `read`" },
    { action: "block", message: "stop, and end the turn", terminate: true },
    { action: "steer", message: "try another approach", deliver: "now" },
    { action: "steer", message: "start over calmly", deliver: "at_settle" },
    { action: "compact", message: "continue from the summary", deliver: "now" },
    { action: "abort", message: "loop", code: "loop_aborted:generic-repeat" },
  ]);
  loopguard(pi, { client, session: "s" });
  await pi.emit("before_agent_start", { prompt: "go" }, ctx);
  const call = (i) => pi.emit("tool_call", { toolCallId: `c${i}`, toolName: "read", input: { path: "a" } }, ctx);
  assert.equal(await call(0), undefined);
  assert.deepEqual(await call(1), { block: true, reason: "stop repeating `read`" });
  assert.deepEqual(await call(2), { block: true, reason: "stop, and end the turn", terminate: true });
  assert.equal(await call(3), undefined);
  assert.deepEqual(pi.sent, [{ text: "try another approach", options: { deliverAs: "steer" } }]);
  assert.equal(await call(4), undefined);
  assert.equal(pi.sent.length, 1, "an at-settle steer waits for agent_end");
  assert.equal(await call(5), undefined);
  assert.equal(ctx.compactions, 1);
  assert.deepEqual(pi.sent[1], { text: "continue from the summary", options: { deliverAs: "followUp" } });
  const aborted = await call(6);
  assert.equal(aborted.block, true, "the aborting call itself is refused too");
  assert.equal(ctx.aborts, 1);
  await pi.emit("agent_end", {}, ctx);
  assert.deepEqual(pi.sent[2], { text: "start over calmly", options: { deliverAs: "followUp" } });
  // The guard's own message coming back as a prompt is marked as such.
  await pi.emit("before_agent_start", { prompt: "start over calmly" }, ctx);
  const users = client.sent.filter((m) => m.type === "user");
  assert.deepEqual(users.map((u) => u.origin), ["human", "guard"]);
  assert.ok(client.sent.every((m) => m.session === "s"));
});

test("identical calls draw the sidecar's verdicts, and each is applied", { skip }, async () => {
  const client = new RecordingClient({ bin, onError: () => {} });
  const { pi, errors, ctx } = setup({ client });
  try {
    await pi.emit("before_agent_start", { prompt: "fix the failing test" }, ctx);
    const answers = [];
    for (let i = 0; i < 16; i++) {
      answers.push(await callTool(pi, ctx, i, "read", { path: "src/lib.rs" }, "fn main() {}"));
    }
    await pi.emit("agent_end", {}, ctx);
    const calls = client.log.filter((e) => e.sent.type === "tool_call");
    assert.equal(calls.length, 16);
    assert.ok(client.log.every((e) => e.answer && !e.answer.error), "every line is understood");
    const acted = client.log.filter((e) => e.answer.action !== "continue");
    assert.ok(acted.length >= 1, "repeating one call must draw a verdict");
    calls.forEach((e, i) => {
      const a = e.answer;
      if (a.action === "block" || a.action === "abort") assert.equal(answers[i].block, true);
      else assert.equal(answers[i], undefined);
    });
    const steers = acted.filter((e) => e.answer.action === "steer").map((e) => e.answer.message);
    assert.deepEqual(pi.sent.map((m) => m.text).slice(0, steers.length).sort(), [...steers].sort());
    assert.equal(ctx.aborts, acted.filter((e) => e.answer.action === "abort").length);
    assert.deepEqual(errors, []);
  } finally {
    await client.close();
  }
});

test("distinct calls never draw a verdict", { skip }, async () => {
  const { pi, guard, errors, ctx } = setup();
  try {
    await pi.emit("before_agent_start", { prompt: "list every directory" }, ctx);
    for (let i = 0; i < 30; i++) {
      const r = await callTool(pi, ctx, i, "bash", { command: `ls dir${i}` }, `file${i}.rs`);
      assert.equal(r, undefined);
    }
    await pi.emit("agent_end", {}, ctx);
    assert.equal(ctx.aborts, 0);
    assert.deepEqual(pi.sent, []);
    assert.deepEqual(errors, []);
  } finally {
    await guard.close();
  }
});

test("a runaway streamed message draws a verdict while it streams", { skip }, async () => {
  const client = new RecordingClient({ bin, onError: () => {} });
  const { pi, guard, errors, ctx } = setup({ client });
  try {
    await pi.emit("before_agent_start", { prompt: "explain the build" }, ctx);
    let text = "";
    for (let i = 0; i < 400 && ctx.aborts === 0; i++) {
      const delta = "Let me check the build configuration again. ";
      text += delta;
      await pi.emit(
        "message_update",
        {
          message: { role: "assistant", content: [{ type: "text", text }] },
          assistantMessageEvent: { type: "text_delta", delta },
        },
        ctx,
      );
    }
    await pi.emit("message_end", { message: { role: "assistant", content: [{ type: "text", text }] } }, ctx);
    await pi.emit("agent_end", {}, ctx);
    const acted = client.log.filter((e) => e.answer && e.answer.action !== "continue");
    assert.ok(acted.length >= 1, "the repetition must draw a verdict");
    assert.equal(ctx.aborts, acted.filter((e) => e.answer.action === "abort").length);
    assert.deepEqual(errors, []);
  } finally {
    await guard.close();
  }
});

test("accumulated message updates are forwarded as deltas", { skip }, async () => {
  const { pi, guard, ctx } = setup();
  try {
    await pi.emit("before_agent_start", { prompt: "hi" }, ctx);
    await pi.emit("message_update", { message: { role: "assistant", content: [{ type: "text", text: "Hel" }] } }, ctx);
    await pi.emit("message_update", { message: { role: "assistant", content: [{ type: "text", text: "Hello" }] } }, ctx);
    await pi.emit("message_end", { message: { role: "assistant", content: [{ type: "text", text: "Hello" }] } }, ctx);
    // user, run_start, message_start, two deltas, message_end: the next event's seq is 6.
    const answer = await guard.client.send({ session: guard.session, type: "run_end" });
    assert.equal(answer.seq, 6);
  } finally {
    await guard.close();
  }
});

test("snapshot and restore carry a session over to a new sidecar", { skip }, async () => {
  const first = setup();
  let state;
  try {
    await first.pi.emit("before_agent_start", { prompt: "fix it" }, first.ctx);
    for (let i = 0; i < 2; i++) await callTool(first.pi, first.ctx, i, "read", { path: "a" }, "same");
    state = await first.guard.snapshot();
    assert.equal(typeof state, "object");
    assert.notEqual(state, null);
  } finally {
    await first.guard.close();
  }
  const second = setup();
  try {
    const r = await second.guard.restore(state);
    assert.equal(r.ok, true, JSON.stringify(r));
    const answer = await second.guard.client.send({ session: second.guard.session, type: "run_end" });
    assert.equal(answer.seq, 6, "user, run_start and two call/result pairs were restored");
  } finally {
    await second.guard.close();
  }
});

test("malformed lines are answered with errors and the stream goes on", { skip }, async () => {
  const client = new SidecarClient({ bin, onError: () => {} });
  try {
    const bad = await client.send({ session: "m", type: "tool_call", id: "x" });
    assert.match(bad.error.message, /missing field `tool`/);
    const good = await client.send({ session: "m", type: "user", text: "ok" });
    assert.equal(good.action, "continue");
  } finally {
    await client.close();
  }
});

test("a missing sidecar fails open: events pass and the error is reported once", async () => {
  const pi = mockPi();
  const errors = [];
  const guard = loopguard(pi, { bin: "/nonexistent/loopguard", onError: (e) => errors.push(e) });
  const ctx = mockCtx();
  await pi.emit("before_agent_start", { prompt: "go" }, ctx);
  const r = await pi.emit("tool_call", { toolCallId: "c", toolName: "read", input: {} }, ctx);
  assert.equal(r, undefined);
  assert.equal(ctx.aborts, 0);
  assert.equal(errors.length, 1);
  await guard.close();
});

test("openClient prefers the native module when it can be imported, else the sidecar", async () => {
  const { mkdtempSync, writeFileSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { pathToFileURL } = await import("node:url");
  const { openClient, NativeClient } = await import("./loopguard-pi.mjs");
  const dir = mkdtempSync(join(tmpdir(), "loopguard-native-"));
  try {
    // A stand-in with the native module's API: new Guard({ preset }), observe(event).
    const fake = join(dir, "fake-native.mjs");
    writeFileSync(
      fake,
      `export class Guard {
        constructor(o) { this.preset = o.preset; this.seen = []; }
        observe(e) {
          this.seen.push(e);
          return e.type === "tool_call" && this.seen.filter((x) => x.type === "tool_call").length >= 2
            ? { action: "block", message: "repeated " + this.preset, code: "x", terminate: false, findings: [{ detector: "generic-repeat" }] }
            : { action: "continue", message: null, code: null, terminate: false, findings: [] };
        }
      }`,
    );
    const errors = [];
    const client = await openClient({ preset: "pi-loop-guard", nativeModule: pathToFileURL(fake).href, onError: (e) => errors.push(e) });
    assert.ok(client instanceof NativeClient);
    assert.equal(client.guard.preset, "pi-loop-guard");
    const pi = mockPi();
    const ctx = mockCtx();
    const guard = loopguard(pi, { client, session: "n" });
    assert.equal(await callTool(pi, ctx, 1, "read", { path: "a" }, "x"), undefined);
    const r = await callTool(pi, ctx, 2, "read", { path: "a" }, "x");
    assert.deepEqual(r, { block: true, reason: "repeated pi-loop-guard" });
    // The session id is not part of what the native guard sees.
    assert.ok(client.guard.seen.every((e) => !("session" in e)));
    assert.deepEqual(guard.stats().block, 1);
    assert.equal(guard.stats().last.detector, "generic-repeat");
    // Off: nothing is forwarded, nothing is blocked.
    await guard.disable();
    const before = client.guard.seen.length;
    assert.equal(await callTool(pi, ctx, 3, "read", { path: "a" }, "x"), undefined);
    assert.equal(client.guard.seen.length, before);
    await guard.enable();
    assert.equal((await callTool(pi, ctx, 4, "read", { path: "a" }, "x"))?.block, true);
    assert.deepEqual(errors, []);

    // No native module, or a config file (which only the sidecar reads): the sidecar.
    const missing = await openClient({ nativeModule: pathToFileURL(join(dir, "none.mjs")).href, bin: join(dir, "no-bin"), onError: () => {} });
    assert.equal(missing.kind, "sidecar");
    await missing.close();
    const withConfig = await openClient({ nativeModule: pathToFileURL(fake).href, config: "x.toml", bin: join(dir, "no-bin"), onError: () => {} });
    assert.equal(withConfig.kind, "sidecar");
    await withConfig.close();
    await assert.rejects(openClient({ transport: "native", nativeModule: pathToFileURL(join(dir, "none.mjs")).href }), /cannot be imported/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("pi-loop-guard's LOOP_GUARD_* variables reach the sidecar", { skip }, async () => {
  // The first block of identical calls, under the given environment.
  const firstBlock = async (env) => {
    const saved = { ...process.env };
    Object.assign(process.env, env);
    const { pi, guard, errors, ctx } = setup({ preset: "pi-loop-guard" });
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
    try {
      await pi.emit("before_agent_start", { prompt: "fix the failing test" }, ctx);
      for (let i = 1; i <= 12; i++) {
        const r = await callTool(pi, ctx, i, "read", { path: "src/lib.rs" }, "fn main() {}");
        if (r?.block) return { call: i, terminate: r.terminate === true, errors };
      }
      return { call: null, errors };
    } finally {
      await guard.close();
    }
  };
  // pi-loop-guard refuses the 5th identical call by default.
  assert.deepEqual(await firstBlock({}), { call: 5, terminate: false, errors: [] });
  assert.deepEqual(await firstBlock({ LOOP_GUARD_WARN_THRESHOLD: "2", LOOP_GUARD_BLOCK_THRESHOLD: "3" }), {
    call: 3,
    terminate: false,
    errors: [],
  });
  assert.deepEqual(await firstBlock({ LOOP_GUARD_USE_TERMINATE: "true" }), { call: 5, terminate: true, errors: [] });
  assert.deepEqual(await firstBlock({ LOOP_GUARD_ENABLED: "false" }), { call: null, errors: [] });
});
