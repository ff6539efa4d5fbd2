"""Verifiers. They return a ``Verdict`` of facts and never shape reward."""

from gymforge.core.verdict import TIMING_FACTS, Verdict

__all__ = ["TIMING_FACTS", "Verdict"]
