#!/usr/bin/env bash
# Events/s through the native packages' observe beside the same events through the sidecar
# (`loopguard serve --stdio`, one pipe round trip per event), from Python and from Node, with
# the ratio. Needs both packages built (`cargo xtask ci` builds them; or `pip install
# bindings/python` and `cd bindings/node && npm ci && npm run build`). Extra arguments
# (`--events N`, `--repeats R`, `--min-ratio X`) go to both benches.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-$PWD/target}"
cargo build --quiet --release -p loopguard-cli
python="${LOOPGUARD_PYTHON:-python3}"
"$python" bindings/python/bench.py --loopguard "$target/release/loopguard" "$@"
(cd bindings/node && node bench.mjs --loopguard "$target/release/loopguard" "$@")
