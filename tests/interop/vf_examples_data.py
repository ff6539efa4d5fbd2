"""The offline rows the Verifiers example environments (``vf_ex_*.py``) share: small
arithmetic word problems with string answers, as Verifiers' own examples load GSM8K (which
needs the network). A train and an eval split, so the held-out check has something to hold."""

from __future__ import annotations

from typing import Any

PAIRS = [(a, b) for a in range(2, 14) for b in range(3, 9)]


def rows(split: str) -> list[dict[str, Any]]:
    """``question``/``answer`` rows: 60 for ``train``, 12 for ``eval``."""
    chosen = PAIRS[:60] if split == "train" else PAIRS[60:]
    return [
        {
            "question": f"A crate holds {a} boxes of {b} apples. How many apples are there?",
            "answer": str(a * b),
        }
        for a, b in chosen
    ]


def datasets() -> tuple[Any, Any]:
    from datasets import Dataset

    return Dataset.from_list(rows("train")), Dataset.from_list(rows("eval"))
