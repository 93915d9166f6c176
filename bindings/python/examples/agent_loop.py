"""Where the guard sits in a tool-calling agent loop.

A minimal agent runtime around a scripted fake model (so it runs offline): the model streams
text, then asks for tool calls; the runtime runs them and feeds the results back. The guard
is asked three times per step:

1. on every streamed text chunk (``text_delta``): a message that repeats itself is cut off;
2. before a tool runs (``tool_call``): a BLOCK means the tool does not run and the model gets
   the guard's message as the tool's error; an ABORT ends the request;
3. after the tool's result (``tool_result``): a STEER is injected as a message before the next
   model call.

Run it: ``python examples/agent_loop.py`` (after ``pip install bindings/python``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Union

from agent_loopguard import Action, Guard, Verdict


@dataclass
class ToolCall:
    id: str
    name: str
    args: Dict[str, Any]


Piece = Union[str, ToolCall]
"""What a model streams: text chunks, then tool calls."""


class FakeModel:
    """Replays a script: one list of pieces per turn; a turn with no tool call ends the run."""

    def __init__(self, turns: Callable[[int, List[Dict[str, Any]]], List[Piece]]):
        self._turns = turns
        self.calls = 0

    def stream(self, messages: List[Dict[str, Any]]) -> Iterator[Piece]:
        turn = self.calls
        self.calls += 1
        yield from self._turns(turn, messages)


@dataclass
class Outcome:
    """How a run ended and what the guard did on the way."""

    stopped: str  # "done", "aborted" or "turn_limit"
    turns: int = 0
    steers: List[str] = field(default_factory=list)
    blocked: List[str] = field(default_factory=list)
    tools_run: int = 0
    cut_text: int = 0
    abort_code: Optional[str] = None
    messages: List[Dict[str, Any]] = field(default_factory=list)


def run_agent(
    model: FakeModel,
    tools: Dict[str, Callable[[Dict[str, Any]], str]],
    guard: Guard,
    prompt: str,
    max_turns: int = 40,
) -> Outcome:
    out = Outcome(stopped="turn_limit")
    guard.run_start()
    guard.user(prompt, origin="human")
    out.messages.append({"role": "user", "content": prompt})
    pending: List[str] = []

    def note(v: Verdict) -> bool:
        """Queues a steer; True when the verdict ends the request."""
        if v.action == Action.STEER or v.action == Action.COMPACT:
            if v.message:
                pending.append(v.message)
        if v.action == Action.ABORT:
            out.stopped, out.abort_code = "aborted", v.code
            return True
        return False

    for turn in range(max_turns):
        out.turns = turn + 1
        guard.message_start()
        text: List[str] = []
        calls: List[ToolCall] = []
        for piece in model.stream(out.messages):
            if isinstance(piece, ToolCall):
                calls.append(piece)
                continue
            v = guard.text_delta(piece)  # (1) on streamed text
            if v.action != Action.CONTINUE:
                # The message loops: stop streaming it (a real host cancels the request).
                out.cut_text += 1
                if note(v):
                    return out
                break
            text.append(piece)
        if note(guard.message_end()):
            return out
        out.messages.append(
            {"role": "assistant", "content": "".join(text), "tool_calls": [c.name for c in calls]}
        )
        if not calls and not pending:
            out.stopped = "done"
            guard.run_end()
            return out
        for call in calls:
            v = guard.tool_call(call.id, call.name, call.args)  # (2) before the tool runs
            if v.action == Action.ABORT:
                note(v)
                return out
            if v.action == Action.BLOCK:
                # The tool does not run; the model reads the guard's reason as its error.
                out.blocked.append(v.code or "")
                result, is_error = v.message or "blocked", True
                guard.tool_result(call.id, call.name, result, is_error=True)
            else:
                note(v)
                result, is_error = tools[call.name](call.args), False
                out.tools_run += 1
                if note(guard.tool_result(call.id, call.name, result)):  # (3) after its result
                    return out
            out.messages.append(
                {"role": "tool", "id": call.id, "content": result, "is_error": is_error}
            )
        for steer in pending:
            out.steers.append(steer)
            out.messages.append({"role": "user", "content": steer})
            guard.user(steer, origin="guard")
        pending.clear()
    return out


FILES = {"src/main.py": "print('hello')\n", "src/util.py": "def add(a, b):\n    return a + b\n"}
TOOLS: Dict[str, Callable[[Dict[str, Any]], str]] = {
    "read": lambda args: FILES.get(args.get("path", ""), "no such file"),
    "list": lambda args: json.dumps(sorted(FILES)),
}


def stubborn_model() -> FakeModel:
    """Reads the same file every turn, whatever it is told."""
    return FakeModel(
        lambda turn, _: [
            "Let me look at the file. ",
            ToolCall(f"call-{turn}", "read", {"path": "src/main.py"}),
        ]
    )


def healthy_model() -> FakeModel:
    """Lists, reads two files, answers."""
    script: List[List[Piece]] = [
        ["I'll list the files.", ToolCall("c1", "list", {})],
        ["Reading main.", ToolCall("c2", "read", {"path": "src/main.py"})],
        ["Reading util.", ToolCall("c3", "read", {"path": "src/util.py"})],
        ["main prints hello; util adds two numbers."],
    ]
    return FakeModel(lambda turn, _: script[min(turn, len(script) - 1)])


def babbling_model() -> FakeModel:
    """Streams the same sentence over and over in one message."""
    return FakeModel(lambda turn, _: ["I will now check the configuration file. "] * 200)


def main() -> None:
    for name, model in [
        ("healthy", healthy_model()),
        ("stubborn", stubborn_model()),
        ("babbling", babbling_model()),
    ]:
        out = run_agent(model, TOOLS, Guard("default"), "What do the files in src/ do?")
        print(
            f"{name:9} stopped={out.stopped} turns={out.turns} tools_run={out.tools_run} "
            f"steers={len(out.steers)} blocked={out.blocked} cut_text={out.cut_text} "
            f"abort_code={out.abort_code}"
        )


if __name__ == "__main__":
    main()
