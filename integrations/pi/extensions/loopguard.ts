// loopguard for Pi, as a Pi package extension: no configuration needed.
//
// - Guards every session with the `default` preset (another preset, a configuration file or
//   the sidecar program can be chosen in Pi's settings.json under "loopguard", or with
//   LOOPGUARD_PRESET / LOOPGUARD_CONFIG / LOOPGUARD_BIN).
// - pi-loop-guard's LOOP_GUARD_* variables are honoured (loopguard applies them over the preset).
// - /loopguard on | off | status; /runaway on | off (a bare /runaway toggles), for
//   pi-repetition-guard users.
// - A footer status: loopguard:on / loopguard:off.
// - Runs in process through the native module `agent-loopguard` when it can be imported, else
//   through the sidecar `loopguard serve --stdio`. If neither is available every event passes.

import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import loopguard, { openClient } from "../loopguard-pi.mjs";

/** The status key in Pi's footer. */
export const STATUS_KEY = "loopguard";

/** How loopguard runs in Pi, after settings and environment. */
export interface LoopguardSettings {
  /** The preset: `default`, `pi-loop-guard`, `pi-repetition-guard`, `openclaw`. */
  preset: string;
  /** A configuration file (loopguard TOML, or OpenClaw's openclaw.json). */
  config?: string;
  /** The sidecar program (default `loopguard` on PATH). */
  bin?: string;
  /** `auto` (native module if present, else sidecar), `native` or `sidecar`. */
  transport: "auto" | "native" | "sidecar";
  /** Whether the guard starts on. */
  enabled: boolean;
}

type Json = Record<string, unknown>;

function readJson(file: string): Json | undefined {
  try {
    const v: unknown = JSON.parse(readFileSync(file, "utf8"));
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Json) : undefined;
  } catch {
    return undefined;
  }
}

function falsy(v: string | undefined): boolean {
  return v !== undefined && ["0", "false", "no", "off", ""].includes(v.trim().toLowerCase());
}

/**
 * The settings: the "loopguard" object of Pi's global settings.json (in $PI_CODING_AGENT_DIR,
 * default ~/.pi/agent), then of the project's .pi/settings.json, then the environment.
 */
export function readSettings(cwd: string, env: NodeJS.ProcessEnv = process.env): LoopguardSettings {
  const agentDir = env.PI_CODING_AGENT_DIR || join(homedir(), ".pi", "agent");
  const s: LoopguardSettings = { preset: "default", transport: "auto", enabled: true };
  for (const file of [join(agentDir, "settings.json"), join(cwd, ".pi", "settings.json")]) {
    const lg = readJson(file)?.loopguard;
    if (lg === null || typeof lg !== "object" || Array.isArray(lg)) continue;
    const o = lg as Json;
    if (typeof o.preset === "string") s.preset = o.preset;
    if (typeof o.config === "string") s.config = o.config;
    if (typeof o.bin === "string") s.bin = o.bin;
    if (o.transport === "auto" || o.transport === "native" || o.transport === "sidecar") s.transport = o.transport;
    if (typeof o.enabled === "boolean") s.enabled = o.enabled;
  }
  if (env.LOOPGUARD_PRESET) s.preset = env.LOOPGUARD_PRESET;
  if (env.LOOPGUARD_CONFIG) s.config = env.LOOPGUARD_CONFIG;
  if (env.LOOPGUARD_BIN) s.bin = env.LOOPGUARD_BIN;
  // pi-loop-guard's master switch.
  if (falsy(env.LOOP_GUARD_ENABLED)) s.enabled = false;
  return s;
}

type Guard = ReturnType<typeof loopguard>;

export default async function loopguardExtension(pi: ExtensionAPI): Promise<void> {
  const settings = readSettings(process.cwd());
  let error: Error | null = null;
  const onError = (e: Error): void => {
    error ??= e;
    console.error(`loopguard: ${e.message}`);
  };
  // Pi awaits an async factory before the session starts, so the event handlers exist
  // before the first event.
  const client = await openClient({ ...settings, onError }).catch((e: unknown) => {
    onError(e instanceof Error ? e : new Error(String(e)));
    return openClient({ ...settings, transport: "sidecar", onError });
  });
  const ready: Promise<Guard> = Promise.resolve(loopguard(pi, { client, enabled: settings.enabled, onError }));

  const footer = (ctx: ExtensionContext, g: Guard): void => {
    ctx.ui.setStatus(STATUS_KEY, g.enabled ? "loopguard:on" : "loopguard:off");
  };

  const statusText = (g: Guard): string => {
    const st = g.stats();
    const transport =
      g.client.kind === "native"
        ? "native module"
        : `sidecar (${settings.bin || process.env.LOOPGUARD_BIN || "loopguard"} serve --stdio)`;
    const lines = [
      `loopguard is ${g.enabled ? "on" : "off"} · preset ${settings.preset}${settings.config ? ` · config ${settings.config}` : ""}`,
      `transport: ${transport}${error || g.client.failed ? ` — unavailable, every event passes: ${(error || g.client.failed)?.message}` : ""}`,
      `events seen: ${st.events} · steers ${st.steer} · blocks ${st.block} · compactions ${st.compact} · aborts ${st.abort}`,
    ];
    if (st.last) lines.push(`last: ${st.last.action}${st.last.detector ? ` (${st.last.detector})` : ""}`);
    return lines.join("\n");
  };

  const setOn = async (on: boolean, ctx: ExtensionContext): Promise<Guard> => {
    const g = await ready;
    if (on) await g.enable();
    else await g.disable();
    footer(ctx, g);
    ctx.ui.notify(`loopguard ${on ? "on" : "off"}`, "info");
    return g;
  };

  pi.on("session_start", async (_event, ctx) => {
    footer(ctx, await ready);
  });

  pi.on("session_shutdown", async () => {
    await (await ready).close();
  });

  const words = ["on", "off", "status"];
  pi.registerCommand("loopguard", {
    description: "loopguard: on | off | status",
    getArgumentCompletions: (prefix) =>
      words.filter((w) => w.startsWith(prefix.trim())).map((w) => ({ value: w, label: w })),
    handler: async (args, ctx) => {
      const word = args.trim().toLowerCase();
      if (word === "on" || word === "off") {
        await setOn(word === "on", ctx);
        return;
      }
      const g = await ready;
      footer(ctx, g);
      if (word === "" || word === "status") {
        ctx.ui.notify(statusText(g), "info");
      } else {
        ctx.ui.notify(`loopguard: unknown argument "${word}" (use on, off or status)`, "warning");
      }
    },
  });

  pi.registerCommand("runaway", {
    description: "loopguard's switch under pi-repetition-guard's name: /runaway on | off; bare toggles",
    handler: async (args, ctx) => {
      const word = args.trim().toLowerCase();
      const g = await ready;
      const on = word === "on" ? true : word === "off" ? false : !g.enabled;
      await setOn(on, ctx);
    },
  });
}
