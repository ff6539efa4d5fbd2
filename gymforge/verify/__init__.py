"""Verifiers. They return a ``Verdict`` of facts and never shape reward."""

from gymforge.verify.verdict import Verdict

__all__ = ["Verdict"]
