"""Judge calibration: agreement with human labels, and the decision threshold it implies.

Labels are JSONL, one graded answer per line::

    {"id": "q1", "question": "...", "answer": "...", "reference": "...",
     "label": true, "criteria": {"correctness": true, "completeness": false},
     "judge": {"score": 0.8, "criteria": {"correctness": 0.9, "completeness": 0.6},
               "version": "judge@1.0.0/..."}}

``label`` (and each ``criteria`` value) is the human's pass/fail (``true``/``false`` or
1/0). ``judge`` is optional: the judge's recorded output, for calibrating offline; when a
judge is given instead, it grades every item afresh (``score_items``). Judge scores are
the weighted rubric score and the per-criterion scores, all normalised to [0, 1].

``calibrate`` computes, against the human labels:

- the **threshold**: the judge passes an answer iff ``score >= threshold``. Candidates are
  the lowest score and the midpoints between consecutive distinct scores; the chosen one
  maximises Cohen's kappa, then accuracy, then lies nearest 0.5 (deterministic);
- at that threshold: **accuracy**, **Cohen's kappa** ``(p_o - p_e) / (1 - p_e)`` with
  ``p_e`` from the two raters' pass rates (None when ``p_e = 1``: both raters constant,
  agreement by chance is total and kappa is undefined), and the **confusion matrix**
  (``tp``: both pass; ``fp``: judge passes, human fails; ``fn``; ``tn``);
- **per-criterion agreement**: for every criterion the human labelled, the judge's
  criterion score against the same threshold (n, accuracy, kappa, confusion).
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gymforge.core.errors import ConfigError
from gymforge.tasks.files import utf8_text


class JudgeRecord(BaseModel):
    """A judge's output on one item: weighted score and per-criterion scores in [0, 1]."""

    model_config = ConfigDict(extra="ignore")

    score: float = Field(ge=0.0, le=1.0)
    criteria: dict[str, float] = Field(default_factory=dict)
    version: str | None = None


class LabeledItem(BaseModel):
    """One line of a labels file."""

    model_config = ConfigDict(extra="ignore")

    id: str
    question: str = ""
    answer: str = ""
    reference: str | None = None
    label: bool
    criteria: dict[str, bool] = Field(default_factory=dict)
    judge: JudgeRecord | None = None


def load_labels(path: str | Path) -> tuple[list[LabeledItem], str]:
    """The items of a labels file and the file's SHA-256; ``ConfigError`` names a bad line."""
    raw = Path(path).read_bytes()
    items: list[LabeledItem] = []
    for n, line in enumerate(utf8_text(raw, path).splitlines(), 1):
        if not line.strip():
            continue
        try:
            items.append(LabeledItem.model_validate_json(line))
        except ValidationError as err:
            first = err.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ConfigError(f"{path}:{n}: {where}: {first['msg']}") from None
    if not items:
        raise ConfigError(f"{path}: no labelled items")
    if len({i.id for i in items}) != len(items):
        raise ConfigError(f"{path}: item ids must be unique")
    return items, hashlib.sha256(raw).hexdigest()


class Agreement(BaseModel):
    """Agreement between human and judge pass/fail decisions."""

    model_config = ConfigDict(frozen=True)

    n: int
    accuracy: float
    kappa: float | None
    confusion: dict[str, int]


def agreement(human: Sequence[bool], judge: Sequence[bool]) -> Agreement:
    """Accuracy, Cohen's kappa and the confusion matrix (see the module docstring)."""
    if len(human) != len(judge) or not human:
        raise ValueError("agreement needs two equally long, non-empty label lists")
    tp = sum(h and j for h, j in zip(human, judge, strict=True))
    fp = sum(j and not h for h, j in zip(human, judge, strict=True))
    fn = sum(h and not j for h, j in zip(human, judge, strict=True))
    tn = len(human) - tp - fp - fn
    n = len(human)
    p_o = (tp + tn) / n
    p_e = ((tp + fn) / n) * ((tp + fp) / n) + ((fp + tn) / n) * ((fn + tn) / n)
    kappa = None if abs(1.0 - p_e) < 1e-12 else (p_o - p_e) / (1.0 - p_e)
    return Agreement(
        n=n,
        accuracy=round(p_o, 6),
        kappa=None if kappa is None else round(kappa, 6),
        confusion={"tp": tp, "fp": fp, "fn": fn, "tn": tn},
    )


def candidate_thresholds(scores: Sequence[float]) -> list[float]:
    """The lowest score and the midpoints between consecutive distinct scores."""
    distinct = sorted(set(scores))
    mids = [round((a + b) / 2, 6) for a, b in itertools.pairwise(distinct)]
    return [distinct[0], *mids]


def choose_threshold(scores: Sequence[float], labels: Sequence[bool]) -> tuple[float, Agreement]:
    """The threshold maximising kappa, then accuracy, then nearest 0.5; and its agreement."""
    best: tuple[tuple[float, float, float], float, Agreement] | None = None
    for t in candidate_thresholds(scores):
        a = agreement(labels, [s >= t for s in scores])
        key = (a.kappa if a.kappa is not None else -2.0, a.accuracy, -abs(t - 0.5))
        if best is None or key > best[0]:
            best = (key, t, a)
    assert best is not None
    return best[1], best[2]


class Calibration(BaseModel):
    """A judge's measured agreement with human labels and the threshold chosen from it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    judge_version: str
    n: int
    threshold: float
    accuracy: float
    kappa: float | None
    confusion: dict[str, int]
    per_criterion: dict[str, Agreement] = Field(default_factory=dict)
    labels_sha256: str = ""
    selection: str = "max kappa, then accuracy, then nearest 0.5"

    def figures(self) -> dict[str, Any]:
        """The compact figures stamped on every verdict of a calibrated judge."""
        return {
            "threshold": self.threshold,
            "n": self.n,
            "accuracy": self.accuracy,
            "kappa": self.kappa,
            "labels_sha256": self.labels_sha256[:16],
        }

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.model_dump(mode="json"), indent=2) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> Calibration:
        try:
            return cls.model_validate_json(Path(path).read_text())
        except ValidationError as err:
            raise ConfigError(f"{path}: not a calibration file: {err.errors()[0]['msg']}") from None


def calibrate(
    items: Sequence[LabeledItem],
    records: Sequence[JudgeRecord],
    *,
    judge_version: str,
    labels_sha256: str = "",
) -> Calibration:
    """Agreement figures of ``records`` (the judge's outputs, one per item) against the
    items' human labels; see the module docstring."""
    if len(items) != len(records) or not items:
        raise ValueError("calibrate needs one judge record per labelled item")
    scores = [r.score for r in records]
    labels = [i.label for i in items]
    threshold, overall = choose_threshold(scores, labels)
    per: dict[str, Agreement] = {}
    names = sorted({name for i in items for name in i.criteria})
    for name in names:
        pairs = [
            (i.criteria[name], r.criteria[name] >= threshold)
            for i, r in zip(items, records, strict=True)
            if name in i.criteria and name in r.criteria
        ]
        if pairs:
            per[name] = agreement([h for h, _ in pairs], [j for _, j in pairs])
    return Calibration(
        judge_version=judge_version,
        n=overall.n,
        threshold=threshold,
        accuracy=overall.accuracy,
        kappa=overall.kappa,
        confusion=overall.confusion,
        per_criterion=per,
        labels_sha256=labels_sha256,
    )


def recorded(items: Sequence[LabeledItem]) -> tuple[list[JudgeRecord], str]:
    """The judge records stored in the labels, and the judge version they name."""
    missing = [i.id for i in items if i.judge is None]
    if missing:
        raise ConfigError(
            f"{len(missing)} items carry no 'judge' record (first: {missing[0]!r}); "
            "give --judge to grade them"
        )
    records = [i.judge for i in items if i.judge is not None]
    versions = {r.version for r in records if r.version}
    if len(versions) > 1:
        raise ConfigError(f"the judge records name {len(versions)} judge versions; calibrate one")
    return records, versions.pop() if versions else "recorded"
