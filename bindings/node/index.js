'use strict';
// Loads the native addon built for this platform (`napi build --platform` names it
// agent-loopguard.<platform>-<arch>[-<abi>].node) and adds the Action constants.
const { existsSync } = require('node:fs');
const { join } = require('node:path');

function platformSuffix() {
  const { platform, arch } = process;
  if (platform === 'linux') {
    const report = process.report && typeof process.report.getReport === 'function'
      ? process.report.getReport()
      : null;
    const glibc = report && report.header && report.header.glibcVersionRuntime;
    return `linux-${arch}-${glibc ? 'gnu' : 'musl'}`;
  }
  if (platform === 'win32') return `win32-${arch}-msvc`;
  return `${platform}-${arch}`;
}

function load() {
  const candidates = [
    process.env.AGENT_LOOPGUARD_NATIVE,
    join(__dirname, `agent-loopguard.${platformSuffix()}.node`),
    join(__dirname, 'agent-loopguard.node'),
  ].filter(Boolean);
  for (const file of candidates) {
    if (existsSync(file)) return require(file);
  }
  throw new Error(
    `agent-loopguard: no native addon for ${platformSuffix()} (looked for ${candidates.join(', ')}); ` +
      'build it with `npm run build` in the package folder (needs cargo)',
  );
}

const native = load();

// Events cross into Rust as one JSON string (JSON.stringify is much cheaper than reading a
// JS object property by property through N-API); values JSON cannot carry are dropped or
// refused as JSON.stringify does.
const { observeJson } = native.Guard.prototype;
native.Guard.prototype.observe = function observe(event) {
  return observeJson.call(this, JSON.stringify(event));
};

exports.Guard = native.Guard;
exports.presets = native.presets;
exports.Action = Object.freeze({
  CONTINUE: 'continue',
  STEER: 'steer',
  COMPACT: 'compact',
  BLOCK: 'block',
  ABORT: 'abort',
});
