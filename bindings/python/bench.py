"""Events per second through agent_loopguard's native observe, beside the same events sent to
the sidecar (`loopguard serve --stdio`) from Python with one pipe round trip per event.

    python bench.py [--events N] [--loopguard PATH] [--min-ratio R]

Both paths do what a host does per event: the native one passes a dict to `observe` (and,
separately, calls the typed helpers); the sidecar one serialises the event as a JSON line,
writes it, waits for the answer line and parses it. Prints events/s for each and the ratio;
with --min-ratio, exits 1 when native/sidecar is below it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

from agent_loopguard import Guard

ROOT = Path(__file__).resolve().parents[2]


def session_events(n: int) -> List[Dict[str, Any]]:
    """An agent at work: streamed messages, then a tool call and its result, varied."""
    events: List[Dict[str, Any]] = [{"type": "user", "text": "fix the failing test", "origin": "human"}]
    step = 0
    while len(events) < n:
        events.append({"type": "message_start"})
        for part in ("Looking at ", f"module {step} ", "next."):
            events.append({"type": "text_delta", "stream": "text", "delta": part})
        events.append({"type": "message_end"})
        tool = ("read", "grep", "edit")[step % 3]
        events.append(
            {"type": "tool_call", "id": f"c{step}", "tool": tool, "args": {"path": f"src/m{step}.rs", "line": step}}
        )
        events.append(
            {"type": "tool_result", "id": f"c{step}", "tool": tool, "content": f"result {step}\n" * 4}
        )
        step += 1
    return events[:n]


def helper_calls(guard: Guard, e: Dict[str, Any]) -> None:
    t = e["type"]
    if t == "tool_call":
        guard.tool_call(e["id"], e["tool"], e["args"])
    elif t == "tool_result":
        guard.tool_result(e["id"], e["tool"], e["content"])
    elif t == "text_delta":
        guard.text_delta(e["delta"], e["stream"])
    elif t == "message_start":
        guard.message_start()
    elif t == "message_end":
        guard.message_end()
    else:
        guard.user(e["text"], e["origin"])


def best_rate(run: Callable[[], None], n: int, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - t0)
    return n / best


def sidecar_loopguard(explicit: str | None) -> Path:
    if explicit:
        return Path(explicit)
    if os.environ.get("LOOPGUARD_BIN"):
        return Path(os.environ["LOOPGUARD_BIN"])
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target / "release" / "loopguard"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=40000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--loopguard", help="the loopguard binary (default: target/release/loopguard)")
    ap.add_argument("--min-ratio", type=float)
    a = ap.parse_args()

    events = session_events(a.events)
    n = len(events)

    def native() -> None:
        g = Guard("default")
        for e in events:
            g.observe(e)

    def helpers() -> None:
        g = Guard("default")
        for e in events:
            helper_calls(g, e)

    binary = sidecar_loopguard(a.loopguard)
    if not binary.exists():
        print(f"no sidecar binary at {binary}: `cargo build --release -p loopguard-cli`", file=sys.stderr)
        return 2
    proc = subprocess.Popen(
        [str(binary), "serve", "--stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        bufsize=1,
    )
    stdin, stdout = proc.stdin, proc.stdout
    assert stdin is not None and stdout is not None
    run_no = [0]

    def sidecar() -> None:
        run_no[0] += 1
        session = f"bench-{run_no[0]}"
        for e in events:
            stdin.write(json.dumps(dict(e, session=session)) + "\n")
            stdin.flush()
            answer = json.loads(stdout.readline())
            if "error" in answer:
                raise RuntimeError(answer)

    try:
        native_rate = best_rate(native, n, a.repeats)
        helper_rate = best_rate(helpers, n, a.repeats)
        sidecar_rate = best_rate(sidecar, n, a.repeats)
    finally:
        stdin.close()
        proc.wait(timeout=10)
    ratio = native_rate / sidecar_rate
    print(f"python {sys.version.split()[0]}, {n} events, best of {a.repeats}")
    print(f"python native observe(dict)      {native_rate:12,.0f} events/s")
    print(f"python native typed helpers      {helper_rate:12,.0f} events/s")
    print(f"python sidecar (pipe round trip) {sidecar_rate:12,.0f} events/s")
    print(f"python ratio native/sidecar      {ratio:12.1f}x")
    if a.min_ratio is not None and ratio < a.min_ratio:
        print(f"ratio {ratio:.1f} is below {a.min_ratio}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
