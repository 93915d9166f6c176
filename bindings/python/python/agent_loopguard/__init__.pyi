"""Type stubs for agent_loopguard (the extension module is agent_loopguard._native)."""

from os import PathLike
from typing import Any, Dict, List, Literal, Mapping, Optional, Union

__version__: str
__all__ = [
    "Action",
    "ConfigError",
    "EventError",
    "Guard",
    "LoopguardError",
    "StateError",
    "Verdict",
    "presets",
    "__version__",
]

JSON = Union[None, bool, int, float, str, List["JSON"], Dict[str, "JSON"]]
Origin = Literal["unknown", "human", "harness", "guard"]
StreamName = Literal["text", "thinking"]

class LoopguardError(Exception):
    """Base class of every error raised by agent_loopguard."""

class ConfigError(LoopguardError):
    """The preset name or TOML configuration does not build a guard."""

class EventError(LoopguardError):
    """An event cannot be used: not a JSON-like dict, no `type`, a missing or mistyped field."""

class StateError(LoopguardError):
    """A snapshot cannot be taken or restored."""

class Action:
    """What the host should do. Ordered: CONTINUE < STEER < COMPACT < BLOCK < ABORT."""

    CONTINUE: "Action"
    STEER: "Action"
    COMPACT: "Action"
    BLOCK: "Action"
    ABORT: "Action"
    @property
    def value(self) -> Literal["continue", "steer", "compact", "block", "abort"]:
        """The lower-case name the sidecar uses."""
    def __int__(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...
    def __lt__(self, other: "Action") -> bool: ...
    def __le__(self, other: "Action") -> bool: ...
    def __gt__(self, other: "Action") -> bool: ...
    def __ge__(self, other: "Action") -> bool: ...
    def __hash__(self) -> int: ...

class Verdict:
    """The guard's answer to one event."""

    @property
    def action(self) -> Action: ...
    @property
    def message(self) -> Optional[str]:
        """Steer text, block reason (the error the model sees) or abort message."""
    @property
    def code(self) -> Optional[str]:
        """`tool_loop:<detector>` for a block, `loop_aborted:<detector>` for an abort."""
    @property
    def terminate(self) -> bool:
        """For a block: also end the agent loop."""
    @property
    def whole_batch(self) -> bool:
        """For a block: refuse every call of the current batch."""
    @property
    def deliver(self) -> Literal["now", "at_settle"]:
        """For a steer or a compaction: when to deliver it."""
    @property
    def findings(self) -> List[Dict[str, Any]]: ...
    def to_dict(self) -> Dict[str, Any]:
        """The verdict as the sidecar renders it (action as its lower-case name)."""

class Guard:
    """A loop guard for one agent session."""

    def __init__(self, preset: str = "default") -> None: ...
    @staticmethod
    def from_config(toml: str) -> "Guard": ...
    @staticmethod
    def from_config_file(path: Union[str, "PathLike[str]"]) -> "Guard": ...
    @staticmethod
    def restore(
        state: bytes,
        *,
        preset: Optional[str] = None,
        config: Optional[str] = None,
        config_file: Optional[Union[str, "PathLike[str]"]] = None,
    ) -> "Guard":
        """A guard carrying `state` (from `snapshot()`), built from the same configuration."""
    def observe(self, event: Mapping[str, Any]) -> Verdict:
        """One event as a dict shaped like a sidecar line, e.g.
        ``{"type": "tool_call", "id": "c1", "tool": "read", "args": {"path": "a.py"}}``."""
    def tool_call(
        self, id: str, tool: str, args: JSON = None, batch: Optional[int] = None
    ) -> Verdict: ...
    def tool_result(
        self,
        id: str,
        tool: str,
        content: str = "",
        is_error: bool = False,
        images: int = 0,
        details: JSON = None,
    ) -> Verdict: ...
    def user(self, text: str, origin: Origin = "unknown") -> Verdict: ...
    def text_delta(self, delta: str, stream: StreamName = "text") -> Verdict: ...
    def message_start(self) -> Verdict: ...
    def message_end(self) -> Verdict: ...
    def assistant(
        self, text: Optional[str] = None, thinking: Optional[str] = None
    ) -> Verdict: ...
    def run_start(self, run_id: Optional[str] = None) -> Verdict: ...
    def run_end(self) -> Verdict: ...
    def compaction(self) -> Verdict: ...
    def session_start(self, id: str) -> Verdict: ...
    def snapshot(self) -> bytes: ...
    def detectors(self) -> List[str]: ...
    enabled: bool
    @property
    def seq(self) -> int: ...
    def command(self, line: str) -> Optional[bool]: ...

def presets() -> List[str]: ...
