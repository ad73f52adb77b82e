"""The exceptions fabriclb raises.

They are plain Python classes (the compiled core raises them by name), so the pure-Python
parts of the package import without the compiled core.
"""

from __future__ import annotations

from typing import Optional

__all__ = ["FabriclbError", "ScenarioError", "SimulationError"]


class FabriclbError(Exception):
    """Base class of every error fabriclb raises.

    ``str(err)`` is a one-paragraph message meant for the user. ``kind`` says what went wrong
    in one word; ``field`` is the dotted path of the offending scenario field
    (``"topology.fabric_rate"``, ``"workload[0].load"``), or ``None``.
    """

    def __init__(self, message: str, *, kind: str = "error", field: Optional[str] = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.field = field

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


class ScenarioError(FabriclbError):
    """The input is wrong: a missing or unreadable file (``kind == "io"``), a syntax error
    (``"syntax"``), an unknown, missing or out-of-range field (``"config"``) or a malformed
    flow-size CDF (``"cdf"``). Fix the scenario and try again."""


class SimulationError(FabriclbError):
    """The simulation failed on valid input: an invariant was violated (``kind ==
    "invariant"``) or the simulator crashed (``"panic"``). Always a bug in fabriclb."""
