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
    if (!this.child || this.child.exitCode !== null || this.child.signalCode !== null) return Promise.resolve();
    this.closing = true;
    return new Promise((resolve) => {
      this.child.once("exit", () => resolve());
      this.child.stdin.end();
    });
  }
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
 * Installs loopguard on a Pi extension API. Returns a controller:
 * `{ client, session, enable(), disable(), snapshot(), restore(state), close() }`.
 */
export default function loopguard(pi, options = {}) {
  const client = options.client || new SidecarClient(options);
  const session = options.session || `pi-${process.pid}-${Date.now().toString(36)}`;
  const send = (obj) => client.send({ session, ...obj });
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
    const prompt = typeof event?.prompt === "string" ? event.prompt : contentText(event?.content).text;
    const origin = ownMessages.delete(prompt) ? "guard" : "human";
    apply(await send({ type: "user", text: prompt, origin }), ctx);
    apply(await send({ type: "run_start" }), ctx);
  });

  pi.on("message_update", async (event, ctx) => {
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
    const message = event?.message;
    if (message && message.role && message.role !== "assistant") return;
    if (!open) apply(await send({ type: "message_start" }), ctx);
    open = null;
    apply(await send({ type: "message_end" }), ctx);
  });

  pi.on("tool_call", async (event, ctx) => {
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
    open = null;
    apply(await send({ type: "run_end" }), ctx);
    const queued = settleQueue;
    settleQueue = [];
    for (const text of queued) deliver(text, "followUp");
  });

  return {
    client,
    session,
    enable: () => send({ type: "control", command: "enable" }),
    disable: () => send({ type: "control", command: "disable" }),
    snapshot: async () => (await send({ type: "control", command: "snapshot" }))?.state ?? null,
    restore: (state) => send({ type: "control", command: "restore", state }),
    close: () => client.close(),
  };
}
