"""examples/agent_loop.py, run as a test: the guard in a tool-calling loop, offline."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from agent_loopguard import Guard

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "agent_loop.py"
spec = importlib.util.spec_from_file_location("agent_loop", EXAMPLE)
assert spec and spec.loader
agent_loop = importlib.util.module_from_spec(spec)
sys.modules["agent_loop"] = agent_loop
spec.loader.exec_module(agent_loop)


def run(model):
    return agent_loop.run_agent(model, agent_loop.TOOLS, Guard("default"), "What is in src/?")


def test_healthy_agent_finishes_untouched() -> None:
    out = run(agent_loop.healthy_model())
    assert out.stopped == "done"
    assert out.tools_run == 3 and not out.steers and not out.blocked and out.cut_text == 0


def test_stubborn_agent_is_steered_then_blocked_then_aborted() -> None:
    out = run(agent_loop.stubborn_model())
    assert out.stopped == "aborted"
    assert out.steers, "the repeated read is steered first"
    assert out.blocked and all(code.startswith("tool_loop:") for code in out.blocked)
    assert out.abort_code and out.abort_code.startswith("loop_aborted:")
    # The steer reached the model as a message, and blocked calls returned errors to it.
    assert any(m["role"] == "user" and m["content"] in out.steers for m in out.messages)
    assert any(m["role"] == "tool" and m["is_error"] for m in out.messages)
    # Blocked calls never ran.
    assert out.tools_run + len(out.blocked) == sum(1 for m in out.messages if m["role"] == "tool")


def test_babbling_agent_has_its_stream_cut() -> None:
    out = run(agent_loop.babbling_model())
    assert out.cut_text == 1
    assert out.stopped == "aborted" and out.abort_code
    streamed = "".join(m["content"] for m in out.messages if m["role"] == "assistant")
    assert len(streamed) < len("I will now check the configuration file. ") * 200


def test_main_prints_one_line_per_scenario(capsys) -> None:
    agent_loop.main()
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split()[0] for line in lines] == ["healthy", "stubborn", "babbling"]
