"""The agent_loopguard package: the README example, errors, snapshots, a scripted loop."""

from __future__ import annotations

import re
import sys
import threading
from pathlib import Path

import pytest

import agent_loopguard
from agent_loopguard import (
    Action,
    ConfigError,
    EventError,
    Guard,
    LoopguardError,
    StateError,
    Verdict,
)

ROOT = Path(__file__).resolve().parents[3]


def python_blocks(markdown: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", markdown.read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize(
    "readme", [ROOT / "README.md", ROOT / "bindings" / "python" / "README.md"], ids=["repo", "package"]
)
def test_readme_examples_run(readme: Path) -> None:
    blocks = python_blocks(readme)
    assert blocks, f"{readme} has no python example"
    for block in blocks:
        exec(compile(block, str(readme), "exec"), {})


def identical_reads(guard: Guard, n: int) -> list[Verdict]:
    """The model reads the same file n times, each result the same; blocked calls get the
    guard's reason back as their error result, as a host does."""
    verdicts = []
    for i in range(n):
        v = guard.tool_call(f"c{i}", "read", {"path": "src/main.rs"})
        verdicts.append(v)
        if v.action == Action.ABORT:
            break
        if v.action == Action.BLOCK:
            guard.tool_result(f"c{i}", "read", v.message or "", is_error=True)
        else:
            verdicts.append(guard.tool_result(f"c{i}", "read", "fn main() {}"))
        guard.message_start()
        guard.message_end()
    return verdicts


def test_scripted_loop_is_steered_then_blocked_then_aborted() -> None:
    verdicts = identical_reads(Guard("default"), 30)
    actions = [v.action for v in verdicts]
    first = {a: actions.index(a) for a in (Action.STEER, Action.BLOCK, Action.ABORT)}
    assert first[Action.STEER] < first[Action.BLOCK] < first[Action.ABORT], actions
    block = verdicts[first[Action.BLOCK]]
    assert block.code == "tool_loop:generic-repeat"
    assert block.message and "read" in block.message
    assert block.findings and block.findings[0]["detector"] == "generic-repeat"
    assert block.findings[0]["level"] == "critical"
    abort = verdicts[first[Action.ABORT]]
    assert abort.code and abort.code.startswith("loop_aborted:")
    steer = verdicts[first[Action.STEER]]
    assert steer.message and steer.deliver in ("now", "at_settle")
    # Nothing before the first steer acted.
    assert all(a == Action.CONTINUE for a in actions[: first[Action.STEER]])


def test_varied_work_is_never_interrupted() -> None:
    g = Guard("default")
    g.user("refactor the parser", origin="human")
    for i in range(40):
        assert g.tool_call(f"c{i}", "read", {"path": f"src/file{i}.rs"}).action == Action.CONTINUE
        assert g.tool_result(f"c{i}", "read", f"contents of file {i}").action == Action.CONTINUE
    assert g.seq == 81


def test_dict_events_and_typed_helpers_agree() -> None:
    a, b = Guard("default"), Guard("default")
    lines = [
        {"session": "s1", "type": "user", "text": "go", "origin": "human"},
        {"type": "message_start"},
        {"type": "text_delta", "stream": "thinking", "delta": "hm"},
        {"type": "message_end"},
    ]
    for i in range(8):
        lines.append({"type": "tool_call", "id": f"c{i}", "tool": "grep", "args": {"q": "x", "n": [1, 2.5, None, True]}})
        lines.append({"type": "tool_result", "id": f"c{i}", "tool": "grep", "content": "none"})
    helpers = [
        lambda: b.user("go", origin="human"),
        b.message_start,
        lambda: b.text_delta("hm", stream="thinking"),
        b.message_end,
    ]
    for i in range(8):
        helpers.append(lambda i=i: b.tool_call(f"c{i}", "grep", {"q": "x", "n": [1, 2.5, None, True]}))
        helpers.append(lambda i=i: b.tool_result(f"c{i}", "grep", "none"))
    got_a = [a.observe(line).to_dict() for line in lines]
    got_b = [h().to_dict() for h in helpers]
    assert got_a == got_b
    assert any(d["action"] != "continue" for d in got_a), "eight identical greps draw a verdict"


def test_assistant_event_is_one_whole_message() -> None:
    g = Guard("default")
    v = g.observe({"type": "assistant", "text": "I will check the file again. " * 60})
    assert v.action != Action.CONTINUE
    assert g.seq == 3
    assert g.assistant(text="fine", thinking="ok").action == Action.CONTINUE
    assert g.seq == 7


def test_errors_are_exceptions_with_the_rust_message() -> None:
    with pytest.raises(ConfigError, match="unknown preset `nope`"):
        Guard("nope")
    with pytest.raises(ConfigError, match="invalid syntax"):
        Guard.from_config("[guard\n")
    with pytest.raises(ConfigError, match="no-such-dir"):
        Guard.from_config_file("/no-such-dir/loopguard.toml")
    g = Guard()
    cases = [
        ({"text": "x"}, "missing field `type`"),
        ({"type": "tool_call", "id": "c"}, "`tool_call` event: missing field `tool`"),
        ({"type": "teleport"}, "unknown variant `teleport`"),
        ({"type": "tool_call", "id": "c", "tool": "t", "args": {"x": object()}}, "not JSON"),
        ({"type": "tool_call", "id": "c", "tool": "t", "args": {1: "x"}}, "keys must be strings"),
        ({"type": "tool_call", "id": "c", "tool": "t", "args": float("nan")}, "not finite"),
        ({"type": "tool_call", "id": "c", "tool": "t", "args": 2**70}, "64 bits"),
        ({"type": "control", "command": "reset"}, "sidecar commands"),
    ]
    for event, message in cases:
        with pytest.raises(EventError, match=re.escape(message)):
            g.observe(event)
    deep: list = []
    for _ in range(500):
        deep = [deep]
    with pytest.raises(EventError, match="deeper than"):
        g.tool_call("c", "t", deep)
    cyclic: dict = {}
    cyclic["self"] = cyclic
    with pytest.raises(EventError, match="deeper than"):
        g.tool_call("c", "t", cyclic)
    with pytest.raises(EventError, match="unknown stream"):
        g.text_delta("x", stream="audio")
    with pytest.raises(EventError, match="unknown origin"):
        g.user("x", origin="robot")
    with pytest.raises(TypeError):
        g.observe("not a dict")  # type: ignore[arg-type]
    assert g.seq == 0, "refused events never reach the guard"
    for cls in (ConfigError, EventError, StateError):
        assert issubclass(cls, LoopguardError)


def test_configuration_from_toml_text_and_file(tmp_path: Path) -> None:
    toml = '[detectors.generic-repeat]\nwarn-threshold = 2\nblock-threshold = 3\n'
    strict = Guard.from_config(toml)
    path = tmp_path / "loopguard.toml"
    path.write_text(toml, encoding="utf-8")
    from_file = Guard.from_config_file(path)
    default = Guard()

    def first_block(g: Guard) -> int:
        for i, v in enumerate(identical_reads(g, 20)):
            if v.action == Action.BLOCK:
                return i
        return -1

    a, b, c = first_block(strict), first_block(from_file), first_block(default)
    assert a == b and 0 <= a < c, (a, b, c)


def test_snapshot_restore_continues_where_it_was() -> None:
    g = Guard("default")
    identical_reads(g, 2)
    state = g.snapshot()
    assert isinstance(state, bytes)
    back = Guard.restore(state, preset="default")
    assert back.seq == g.seq
    # Both see the third, fourth ... identical read the same way: the streak was carried over.
    assert [v.to_dict() for v in identical_reads(g, 6)] == [
        v.to_dict() for v in identical_reads(back, 6)
    ]
    fresh = [v.to_dict() for v in identical_reads(Guard("default"), 6)]
    assert fresh != [v.to_dict() for v in identical_reads(Guard.restore(state), 6)]


def test_restore_refuses_bad_state_and_ambiguous_config() -> None:
    with pytest.raises(StateError, match="not a JSON snapshot"):
        Guard.restore(b"{oops")
    with pytest.raises(StateError, match="version 999"):
        Guard.restore(b'{"version": 999}')
    with pytest.raises(ConfigError, match="at most one"):
        Guard.restore(Guard().snapshot(), preset="default", config="")
    with pytest.raises(ConfigError, match="unknown preset"):
        Guard.restore(Guard().snapshot(), preset="nope")


def test_enabled_command_and_detectors() -> None:
    g = Guard("default")
    assert "generic-repeat" in g.detectors()
    assert set(agent_loopguard.presets()) >= {"default", "pi-loop-guard", "openclaw"}
    g.enabled = False
    assert all(v.action == Action.CONTINUE for v in identical_reads(g, 12))
    assert g.command("/runaway on") is True and g.enabled
    assert g.command("hello") is None
    assert any(v.action != Action.CONTINUE for v in identical_reads(g, 12))


def test_action_is_an_ordered_enum_with_sidecar_names() -> None:
    order = [Action.CONTINUE, Action.STEER, Action.COMPACT, Action.BLOCK, Action.ABORT]
    assert sorted(reversed(order)) == order
    assert [a.value for a in order] == ["continue", "steer", "compact", "block", "abort"]
    assert str(Action.BLOCK) == "block"
    assert len({Action.BLOCK, Action.BLOCK, Action.ABORT}) == 2


def test_one_guard_shared_by_threads_sees_every_event() -> None:
    g = Guard("default")
    per_thread = 500

    def work(t: int) -> None:
        for i in range(per_thread):
            g.tool_call(f"t{t}-{i}", "read", {"path": f"{t}/{i}"})

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert g.seq == 4 * per_thread


def test_stubs_and_marker_ship_with_the_package() -> None:
    pkg = Path(agent_loopguard.__file__).parent
    assert (pkg / "py.typed").exists()
    stub = (pkg / "__init__.pyi").read_text(encoding="utf-8")
    for name in agent_loopguard.__all__:
        if name != "__version__":
            assert re.search(rf"^(class|def) {name}\b", stub, re.M), name
    assert sys.version_info >= (3, 9)
