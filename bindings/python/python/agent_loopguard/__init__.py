"""loopguard for Python: stops LLM agents from wasting tokens in loops.

Feed a :class:`Guard` the events of one agent session (user turns, streamed text, tool calls
and their results, compactions); each call answers with a :class:`Verdict` whose
:attr:`~Verdict.action` says what to do: ``Action.CONTINUE``, ``Action.STEER`` (inject
``verdict.message``), ``Action.BLOCK`` (do not run the tool; return ``verdict.message`` as its
error), ``Action.COMPACT`` or ``Action.ABORT`` (end the request).
"""

from ._native import (
    Action,
    ConfigError,
    EventError,
    Guard,
    LoopguardError,
    StateError,
    Verdict,
    presets,
)

try:
    from importlib.metadata import version as _version

    __version__ = _version("agent-loopguard")
except Exception:  # pragma: no cover - not installed as a distribution
    __version__ = "0.0.0"

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
