// loopguard for Pi: forwards a Pi extension's events to the loopguard sidecar
// (`loopguard serve --stdio`) and applies its verdicts. No dependencies.
//
// Usage, in a Pi extension:
//
//   import loopguard from "./loopguard-pi.mjs";
//   export default function (pi) { loopguard(pi, { preset: "default" }); }
//
// Events forwarded: before_agent_start (the prompt, as a user turn, and the run start),
// message_update (the new text and thinking of the streaming assistant message),
// message_end, tool_call, tool_result, agent_end.
// Verdicts applied:
//   block  -> the tool_call handler returns { block: true, reason, terminate? }
//   steer  -> pi.sendUserMessage(message, { deliverAs: "steer" }), or, when the verdict says
//             deliver "at_settle", queued and sent at agent_end (the settle point, where it
//             starts a fresh turn instead of stranding after an abort)
//   abort  -> ctx.abort()
//   compact-> ctx.compact(), then the "continue" message once compaction completes
// If the sidecar cannot be started or dies, every event passes (fail open) and the error is
// reported once through options.onError (default: console.error).

import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

/** The sidecar program: options.bin, then $LOOPGUARD_BIN, then `loopguard` on PATH. */
export function sidecarBinary(options = {}) {
  return options.bin || process.env.LOOPGUARD_BIN || "loopguard";
}

/**
 * A connection to one sidecar process. `send(obj)` writes one line and resolves with the
 * parsed answer line (answers come back in order, one per line). After the process fails,
 * `send` resolves with `null`.
 */
export class SidecarClient {
  constructor(options = {}) {
    this.kind = "sidecar";
    const args = ["serve", "--stdio"];
    if (options.preset) args.push("--preset", options.preset);
    if (options.config) args.push("--config", options.config);
    if (options.maxSessions) args.push("--max-sessions", String(options.maxSessions));
    this.pending = [];
    this.failed = null;
    this.onError = options.onError || ((e) => console.error(`loopguard: ${e.message}`));
    this.stderr = "";
    try {
      this.child = spawn(sidecarBinary(options), args, { stdio: ["pipe", "pipe", "pipe"] });
    } catch (e) {
      this.fail(e);
      return;
    }
    this.child.on("error", (e) => this.fail(e));
    this.child.on("exit", (code, signal) => {
      if (this.pending.length > 0 || (code !== 0 && !this.closing)) {
        const why = signal ? `signal ${signal}` : `status ${code}`;
        this.fail(new Error(`sidecar exited with ${why}${this.stderr ? `: ${this.stderr.trim()}` : ""}`));
      }
    });
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (d) => {
      if (this.stderr.length < 4096) this.stderr += d;
    });
    this.child.stdin.on("error", (e) => this.fail(e));
    const lines = createInterface({ input: this.child.stdout });
    lines.on("line", (line) => {
      const next = this.pending.shift();
      if (!next) return;
      try {
        next(JSON.parse(line));
      } catch (e) {
        next(null);
        this.fail(new Error(`unreadable answer from the sidecar: ${e.message}`));
      }
    });
  }

  fail(error) {
    if (this.failed) return;
    this.failed = error;
    for (const resolve of this.pending.splice(0)) resolve(null);
    this.onError(error);
  }

  send(obj) {
    if (this.failed || !this.child) return Promise.resolve(null);
    return new Promise((resolve) => {
      this.pending.push(resolve);
      this.child.stdin.write(`${JSON.stringify(obj)}\n`);
    });
  }

  /** Ends the sidecar and waits for it to exit. */
  close() {
    // A process that failed to start never emits "exit".
    if (!this.child || this.failed || this.child.exitCode !== null || this.child.signalCode !== null) {
      return Promise.resolve();
    }
    this.closing = true;
    return new Promise((resolve) => {
      this.child.once("exit", () => resolve());
      this.child.once("error", () => resolve());
      this.child.stdin.end();
    });
  }
}

/** The native module's package name (napi-rs; optional). */
export const NATIVE_MODULE = "agent-loopguard";

/**
 * A guard running in this process through the native module: the same answers as the
 * sidecar's, without a child process. `guard` is an `agent-loopguard` `Guard`
 * (`observe(event)` returns `{ action, message, code, terminate, findings }`).
 */
export class NativeClient {
  constructor(guard, options = {}) {
    this.kind = "native";
    this.guard = guard;
    this.failed = null;
    this.onError = options.onError || ((e) => console.error(`loopguard: ${e.message}`));
  }

  fail(error) {
    if (this.failed) return;
    this.failed = error;
    this.onError(error);
  }

  send(obj) {
    if (this.failed) return Promise.resolve(null);
    const { session: _session, ...event } = obj;
    try {
      if (event.type === "control") {
        // The native guard has no control channel: on/off is kept by the extension itself.
        if (typeof this.guard.command === "function") return Promise.resolve(this.guard.command(event));
        return Promise.resolve({ control: event.command, ok: event.command === "enable" || event.command === "disable" });
      }
      return Promise.resolve(this.guard.observe(event));
    } catch (e) {
      this.fail(e instanceof Error ? e : new Error(String(e)));
      return Promise.resolve(null);
    }
  }

  close() {
    return Promise.resolve();
  }
}

/**
 * The native module's `Guard` class, or `null` when the module cannot be imported.
 * `specifier` defaults to {@link NATIVE_MODULE}.
 */
export async function loadNativeGuard(specifier = NATIVE_MODULE) {
  try {
    const mod = await import(specifier);
    const Guard = mod.Guard ?? mod.default?.Guard;
    return typeof Guard === "function" ? Guard : null;
  } catch {
    return null;
  }
}

/**
 * Opens the transport: the native module when it can be imported (and no TOML/OpenClaw
 * `config` file is asked for, which only the sidecar reads), else the sidecar
 * (`loopguard serve --stdio`). `options.transport` forces one: `"native"`, `"sidecar"`.
 */
export async function openClient(options = {}) {
  const transport = options.transport || "auto";
  if (transport !== "sidecar" && !(transport === "auto" && options.config)) {
    const Guard = await loadNativeGuard(options.nativeModule);
    if (Guard) {
      try {
        return new NativeClient(new Guard({ preset: options.preset || "default" }), options);
      } catch (e) {
        if (transport === "native") throw e;
      }
    } else if (transport === "native") {
      throw new Error(`the native module ${options.nativeModule || NATIVE_MODULE} cannot be imported`);
    }
  }
  return new SidecarClient(options);
}

/** The text of Pi content blocks (a string passes as is), with the number of images. */
export function contentText(content) {
  if (typeof content === "string") return { text: content, images: 0 };
  let text = [];
  let images = 0;
  for (const block of Array.isArray(content) ? content : []) {
    if (block && block.type === "text" && typeof block.text === "string") text.push(block.text);
    else if (block && block.type === "image") images += 1;
  }
  return { text: text.join("\n"), images };
}

/** Thinking and text of an assistant message, each as one string. */
function messageTexts(message) {
  let thinking = "";
  let text = "";
  for (const block of (message && Array.isArray(message.content) && message.content) || []) {
    if (block.type === "thinking") thinking += block.thinking ?? block.text ?? "";
    else if (block.type === "text") text += block.text ?? "";
  }
  return { thinking, text };
}

/**
 * @param {import("@mariozechner/pi-coding-agent").ExtensionAPI} pi
 * @param {Record<string, any>} [options]
 *
 * Installs loopguard on a Pi extension API. Returns a controller:
 * `{ client, session, enable(), disable(), snapshot(), restore(state), close() }`.
 */
export default function loopguard(pi, options = {}) {
  const client = options.client || new SidecarClient(options);
  const session = options.session || `pi-${process.pid}-${Date.now().toString(36)}`;
  // Off: no event is forwarded and no verdict applied (only the user switches it).
  let active = options.enabled !== false;
  /** @type {{ events: number, steer: number, block: number, abort: number, compact: number, last: null | { action: string, detector: string | null, message: string | null } }} */
  const stats = { events: 0, steer: 0, block: 0, abort: 0, compact: 0, last: null };
  const send = async (obj) => {
    const verdict = await client.send({ session, ...obj });
    if (obj.type !== "control") {
      stats.events += 1;
      if (verdict && !verdict.error && verdict.action && verdict.action !== "continue") {
        if (verdict.action in stats) stats[verdict.action] += 1;
        const f = Array.isArray(verdict.findings) ? verdict.findings[0] : null;
        stats.last = { action: verdict.action, detector: f?.detector ?? null, message: verdict.message ?? null };
        if (options.onVerdict) options.onVerdict(verdict);
      }
    }
    return verdict;
  };
  const ownMessages = new Set();
  let settleQueue = [];
  // The streaming assistant message: what was already forwarded of it.
  let open = null;

  const deliver = (text, deliverAs) => {
    ownMessages.add(text);
    pi.sendUserMessage(text, { deliverAs });
  };

  // Applies a verdict's side effects (steer, abort, compact); returns it.
  const apply = (verdict, ctx) => {
    if (!verdict || verdict.error) return verdict;
    switch (verdict.action) {
      case "steer":
        if (verdict.message) {
          if (verdict.deliver === "at_settle") settleQueue.push(verdict.message);
          else deliver(verdict.message, "steer");
        }
        break;
      case "abort":
        if (ctx && typeof ctx.abort === "function") ctx.abort();
        break;
      case "compact":
        if (ctx && typeof ctx.compact === "function") {
          ctx.compact({
            onComplete: () => verdict.message && deliver(verdict.message, "followUp"),
            onError: (e) => client.onError(e instanceof Error ? e : new Error(String(e))),
          });
        }
        break;
      default:
        break;
    }
    return verdict;
  };

  pi.on("before_agent_start", async (event, ctx) => {
    if (!active) return undefined;
    const prompt = typeof event?.prompt === "string" ? event.prompt : contentText(event?.content).text;
    const origin = ownMessages.delete(prompt) ? "guard" : "human";
    apply(await send({ type: "user", text: prompt, origin }), ctx);
    apply(await send({ type: "run_start" }), ctx);
  });

  pi.on("message_update", async (event, ctx) => {
    if (!active) return undefined;
    const message = event?.message;
    if (message && message.role && message.role !== "assistant") return;
    if (!open) {
      open = { thinking: 0, text: 0 };
      apply(await send({ type: "message_start" }), ctx);
    }
    // Prefer the delta Pi reports; otherwise diff the accumulated message.
    const ame = event?.assistantMessageEvent;
    const parts = [];
    if (ame && (ame.type === "text_delta" || ame.type === "thinking_delta") && typeof ame.delta === "string") {
      const stream = ame.type === "text_delta" ? "text" : "thinking";
      parts.push([stream, ame.delta]);
      open[stream] += ame.delta.length;
    } else if (message) {
      const now = messageTexts(message);
      for (const stream of ["thinking", "text"]) {
        if (now[stream].length > open[stream]) {
          parts.push([stream, now[stream].slice(open[stream])]);
          open[stream] = now[stream].length;
        }
      }
    }
    for (const [stream, delta] of parts) {
      if (delta) apply(await send({ type: "text_delta", stream, delta }), ctx);
    }
  });

  pi.on("message_end", async (event, ctx) => {
    if (!active) return undefined;
    const message = event?.message;
    if (message && message.role && message.role !== "assistant") return;
    if (!open) apply(await send({ type: "message_start" }), ctx);
    open = null;
    apply(await send({ type: "message_end" }), ctx);
  });

  pi.on("tool_call", async (event, ctx) => {
    if (!active) return undefined;
    const verdict = apply(
      await send({
        type: "tool_call",
        id: String(event?.toolCallId ?? ""),
        tool: String(event?.toolName ?? ""),
        args: event?.input ?? {},
      }),
      ctx,
    );
    if (verdict && (verdict.action === "block" || verdict.action === "abort")) {
      const result = { block: true, reason: verdict.message || "Blocked by loopguard: this call repeats without progress." };
      if (verdict.terminate) result.terminate = true;
      return result;
    }
    return undefined;
  });

  pi.on("tool_result", async (event, ctx) => {
    if (!active) return undefined;
    const { text, images } = contentText(event?.content);
    apply(
      await send({
        type: "tool_result",
        id: String(event?.toolCallId ?? ""),
        tool: String(event?.toolName ?? ""),
        content: text,
        images,
        is_error: Boolean(event?.isError),
      }),
      ctx,
    );
    return undefined;
  });

  pi.on("agent_end", async (_event, ctx) => {
    if (!active) return undefined;
    open = null;
    apply(await send({ type: "run_end" }), ctx);
    const queued = settleQueue;
    settleQueue = [];
    for (const text of queued) deliver(text, "followUp");
  });

  return {
    client,
    session,
    get enabled() {
      return active;
    },
    /** What the guard did so far: events forwarded, verdicts by action, the last one. */
    stats: () => ({ ...stats }),
    enable: () => {
      active = true;
      return send({ type: "control", command: "enable" });
    },
    disable: () => {
      active = false;
      open = null;
      settleQueue = [];
      return send({ type: "control", command: "disable" });
    },
    snapshot: async () => (await send({ type: "control", command: "snapshot" }))?.state ?? null,
    restore: (state) => send({ type: "control", command: "restore", state }),
    close: () => client.close(),
  };
}
