// The package as Pi itself loads it: Pi's own CLI (the published @mariozechner/pi-coding-agent,
// installed by `npm ci` in this folder) in RPC mode, with this folder as a package (`-e`, and
// `pi install -l`). Extension commands run without a model, so `/loopguard status` is
// answered by the real extension loader and command dispatch, not a mock.
// Skipped when Pi is not installed here or no loopguard binary exists, except under CI=true.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
const piCli = join(here, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "cli.js");
const candidates = process.env.LOOPGUARD_BIN ? [process.env.LOOPGUARD_BIN] : [join(root, "target/debug/loopguard")];
const bin = candidates.find((p) => existsSync(p));
const ci = process.env.CI === "true";
const missing = [!existsSync(piCli) && `Pi (${piCli}; run npm ci in integrations/pi)`, !bin && `the loopguard binary (${candidates.join(", ")})`].filter(Boolean);
const skip = missing.length ? `missing ${missing.join(" and ")}` : false;

test("Pi and the loopguard binary are present under CI", { skip: !ci }, () => {
  assert.deepEqual(missing, []);
});

/** A scratch Pi home and project. */
function scratch() {
  const dir = mkdtempSync(join(tmpdir(), "loopguard-pi-"));
  const agentDir = join(dir, "agent");
  const cwd = join(dir, "project");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  return { dir, agentDir, cwd, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

function env(agentDir, extra = {}) {
  const e = { ...process.env, PI_CODING_AGENT_DIR: agentDir, LOOPGUARD_BIN: bin, ...extra };
  for (const k of Object.keys(e)) if (k.startsWith("LOOP_GUARD_") && !(k in extra)) delete e[k];
  delete e.LOOPGUARD_PRESET;
  delete e.LOOPGUARD_CONFIG;
  return e;
}

/**
 * Runs Pi in RPC mode, sends each prompt in turn (waiting for its response) and returns the
 * extension UI requests each one produced, plus those produced at startup.
 */
async function rpc({ cwd, agentDir, args = [], extraEnv = {}, prompts }) {
  const child = spawn(process.execPath, [piCli, "--mode", "rpc", "--no-session", ...args], {
    cwd,
    env: env(agentDir, extraEnv),
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  let buffer = "";
  let current = [];
  const waiting = new Map();
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (d) => {
    buffer += d;
    let i;
    while ((i = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, i).replace(/\r$/, "");
      buffer = buffer.slice(i + 1);
      if (!line.trim()) continue;
      const msg = JSON.parse(line);
      if (msg.type === "extension_ui_request") current.push(msg);
      if (msg.type === "response" && waiting.has(msg.id)) {
        const resolve = waiting.get(msg.id);
        waiting.delete(msg.id);
        resolve(msg);
      }
    }
  });
  const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  const results = [];
  try {
    for (const [n, message] of prompts.entries()) {
      const id = `p${n}`;
      const response = new Promise((resolve, reject) => {
        waiting.set(id, resolve);
        exited.then((code) => reject(new Error(`pi exited (${code}) before answering ${message}: ${stderr}`)));
        setTimeout(() => reject(new Error(`no answer to ${message} in 60 s: ${stderr}`)), 60_000).unref();
      });
      child.stdin.write(`${JSON.stringify({ id, type: "prompt", message })}\n`);
      const r = await response;
      assert.equal(r.success, true, `${message}: ${JSON.stringify(r)}`);
      // Fire-and-forget UI requests come before the response; give stragglers a moment.
      await new Promise((resolve) => setTimeout(resolve, 50));
      results.push(current);
      current = [];
    }
  } finally {
    child.stdin.end();
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  }
  return { results, stderr };
}

const notes = (requests) => requests.filter((r) => r.method === "notify").map((r) => r.message);
const statuses = (requests) =>
  requests.filter((r) => r.method === "setStatus" && r.statusKey === "loopguard").map((r) => r.statusText);

test("Pi loads the package and answers /loopguard status, on, off and /runaway", { skip }, async () => {
  const s = scratch();
  try {
    const { results } = await rpc({
      cwd: s.cwd,
      agentDir: s.agentDir,
      args: ["-e", here],
      prompts: ["/loopguard status", "/loopguard off", "/loopguard status", "/runaway", "/runaway off"],
    });
    const [status, off, statusOff, toggled, runawayOff] = results;
    const text = notes(status).join("\n");
    assert.match(text, /^loopguard is on · preset default/m, text);
    assert.match(text, /transport: sidecar \(.*loopguard serve --stdio\)$/m, text);
    assert.doesNotMatch(text, /unavailable/, text);
    assert.match(text, /events seen: 0/, text);
    // The footer is set when the session starts and again by the command.
    assert.ok(statuses(status).length >= 1, JSON.stringify(status));
    assert.ok(statuses(status).every((t) => t === "loopguard:on"), JSON.stringify(status));
    assert.deepEqual(statuses(off), ["loopguard:off"]);
    assert.deepEqual(notes(off), ["loopguard off"]);
    assert.match(notes(statusOff).join("\n"), /^loopguard is off/m);
    assert.deepEqual(statuses(toggled), ["loopguard:on"], "a bare /runaway toggles");
    assert.deepEqual(statuses(runawayOff), ["loopguard:off"]);
  } finally {
    s.cleanup();
  }
});

test("the preset comes from Pi's settings.json, and LOOP_GUARD_ENABLED=false starts it off", { skip }, async () => {
  const s = scratch();
  try {
    writeFileSync(join(s.agentDir, "settings.json"), JSON.stringify({ loopguard: { preset: "pi-repetition-guard" } }));
    let { results } = await rpc({ cwd: s.cwd, agentDir: s.agentDir, args: ["-e", here], prompts: ["/loopguard status"] });
    assert.match(notes(results[0]).join("\n"), /^loopguard is on · preset pi-repetition-guard/m);
    // The project's settings win over the global ones.
    mkdirSync(join(s.cwd, ".pi"), { recursive: true });
    writeFileSync(join(s.cwd, ".pi", "settings.json"), JSON.stringify({ loopguard: { preset: "pi-loop-guard" } }));
    ({ results } = await rpc({
      cwd: s.cwd,
      agentDir: s.agentDir,
      args: ["-e", here],
      extraEnv: { LOOP_GUARD_ENABLED: "false" },
      prompts: ["/loopguard status"],
    }));
    const text = notes(results[0]).join("\n");
    assert.match(text, /^loopguard is off · preset pi-loop-guard/m, text);
    assert.doesNotMatch(text, /unavailable/, text);
  } finally {
    s.cleanup();
  }
});

test("pi install -l of the package directory, then Pi loads it from its settings", { skip }, async () => {
  const s = scratch();
  try {
    const install = spawnSync(process.execPath, [piCli, "install", here, "-l"], {
      cwd: s.cwd,
      env: env(s.agentDir),
      encoding: "utf8",
      timeout: 120_000,
    });
    assert.equal(install.status, 0, `${install.stdout}\n${install.stderr}`);
    const { results } = await rpc({ cwd: s.cwd, agentDir: s.agentDir, prompts: ["/loopguard status"] });
    assert.match(notes(results[0]).join("\n"), /^loopguard is on · preset default/m);
  } finally {
    s.cleanup();
  }
});

test("a missing sidecar is reported by /loopguard status and everything passes", { skip }, async () => {
  const s = scratch();
  try {
    const { results } = await rpc({
      cwd: s.cwd,
      agentDir: s.agentDir,
      args: ["-e", here],
      extraEnv: { LOOPGUARD_BIN: join(s.dir, "no-such-loopguard") },
      prompts: ["/loopguard status"],
    });
    assert.match(notes(results[0]).join("\n"), /unavailable, every event passes: .*ENOENT/);
  } finally {
    s.cleanup();
  }
});
