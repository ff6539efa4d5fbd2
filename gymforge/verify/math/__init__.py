"""The hack-resistant math answer verifier.

- ``MathVerifier(timeout_s=1.0, rel_tol=1e-9, accept_answer_line=False)``: ``verify`` and
  ``averify`` turn (response, gold) into a ``Verdict`` (see its docstring for the facts).
- ``extract_answer(text, accept_answer_line=False) -> ExtractionResult``: the pure extraction
  step (last ``\\boxed{}`` outside ``<think>``).
- ``is_equivalent(answer, gold, rel_tol)``: the equivalence used inside the workers. It
  evaluates sympy, so call it only where a hung call can be killed.
- ``MathPool``: the pre-forked worker pool with hard timeouts; ``default_pool()``: the one
  of the current run (``gymforge.verify.services``).

Importing this package does not import sympy; only the worker processes do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gymforge.verify.math.extract import ExtractionResult, extract_answer, split_reasoning
from gymforge.verify.math.pool import JobResult, MathPool
from gymforge.verify.math.verifier import REASONS, VERIFIER_ID, VERSION, MathVerifier, default_pool

if TYPE_CHECKING:
    from gymforge.verify.math.equiv import Outcome, is_equivalent

__all__ = [
    "REASONS",
    "VERIFIER_ID",
    "VERSION",
    "ExtractionResult",
    "JobResult",
    "MathPool",
    "MathVerifier",
    "Outcome",
    "default_pool",
    "extract_answer",
    "is_equivalent",
    "split_reasoning",
]


def __getattr__(name: str) -> Any:
    if name in ("is_equivalent", "Outcome"):
        from gymforge.verify.math import equiv

        return getattr(equiv, name)
    raise AttributeError(name)
