"""The labelled math answer forms (``data/math_answers.jsonl``), shared by the test and the
benchmark (``benchmarks/math_verifier.py``).

One row per case: ``id``, ``class``, ``gold``, either ``answer`` (the boxed answer of a typical
reply) or ``response`` (the whole reply), and ``label``: whether a correct grader passes it,
under the math environment's contract (the last ``\\boxed{}`` outside ``<think>`` is the
answer). Optional: ``reason`` (gymforge's expected failure reason), ``strict`` (judged in
strict mode), ``form`` and ``form_ok`` (a demanded answer form and whether the answer meets
it; ``label`` stays about the value), ``pad_tokens`` (the reply is preceded by that many
tokens of chain-of-thought, about four bytes each), ``contract`` (the label follows a rule of
gymforge's documented contract that another grader could reasonably decide otherwise, named:
``last_box``, ``unit_on_unitless_gold``, ``reasoning_ignored``, ``percent_is_the_number``...;
the benchmark reports accuracy with and without these rows).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

# A verdict under a hard timeout of at most 1 s arrives within this: far below what an
# unbounded input would take (minutes), far above what a loaded machine adds to a kill and
# respawn. A bound near the timeout itself would be a wall-clock budget a busy machine misses.
BOUNDED_MS = 10_000

DATA = Path(__file__).parent / "data" / "math_answers.jsonl"
_STEP = "Next we check the following case carefully and add it to the running total. "


def box(answer: str) -> str:
    """A typical final reply around ``answer``."""
    return f"Let me work it out step by step. So the answer is $\\boxed{{{answer}}}$."


def reasoning(tokens: int) -> str:
    """About ``tokens`` tokens (four bytes each) of step-by-step reasoning."""
    return _STEP * max(1, tokens * 4 // len(_STEP))


@dataclass(frozen=True)
class Case:
    id: int
    cls: str
    gold: str
    response: str
    label: bool
    reason: str | None = None
    strict: bool = False
    form: str | None = None
    form_ok: bool | None = None
    contract: str | None = None

    @property
    def short(self) -> str:
        text = self.response if len(self.response) < 70 else "..." + self.response[-60:]
        return f"#{self.id} [{self.cls}] {text!r} vs {self.gold!r}"


def load_cases(path: Path = DATA) -> list[Case]:
    out: list[Case] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        response = row["response"] if "response" in row else box(row["answer"])
        if row.get("pad_tokens"):
            response = reasoning(int(row["pad_tokens"])) + response
        out.append(
            Case(
                id=row["id"],
                cls=row["class"],
                gold=row["gold"],
                response=response,
                label=bool(row["label"]),
                reason=row.get("reason"),
                strict=bool(row.get("strict", False)),
                form=row.get("form"),
                form_ok=row.get("form_ok"),
                contract=row.get("contract"),
            )
        )
    return out
