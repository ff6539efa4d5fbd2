"""Judge calibration figures on a labelled set, checked against hand-computed values.

The labelled set (scores are the judge's, labels the human's):

    item  1    2    3    4     5    6     7    8    9    10
    score .90  .80  .70  .65   .60  .55   .40  .30  .20  .10
    human P    P    F    P     P    F     P    F    F    F

At threshold 0.575 (midway between .55 and .60) the judge passes items 1-5:
tp = 4 (1, 2, 4, 5), fp = 1 (3), fn = 1 (7), tn = 4 (6, 8, 9, 10). Accuracy 8/10.
Both raters pass half the items, so p_e = .5 * .5 + .5 * .5 = .5 and
kappa = (.8 - .5) / (1 - .5) = 0.6. Threshold 0.35 also reaches kappa .6 and accuracy .8;
0.575 lies nearer 0.5, so it is chosen. Every other candidate has kappa <= 0.4.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gymforge.cli import app
from gymforge.core.errors import ConfigError
from gymforge.verify.llm_judge import (
    Calibration,
    JudgeRecord,
    LabeledItem,
    agreement,
    calibrate,
    choose_threshold,
    load_labels,
)

SCORES = [0.9, 0.8, 0.7, 0.65, 0.6, 0.55, 0.4, 0.3, 0.2, 0.1]
HUMAN = [True, True, False, True, True, False, True, False, False, False]
# per criterion: human label, judge score
CORRECT = [(True, 1.0), (True, 0.9), (False, 0.8), (True, 0.7), (True, 0.2), (False, 0.1),
           (True, 0.3), (False, 0.1), (False, 0.0), (False, 0.0)]  # fmt: skip


def items() -> list[LabeledItem]:
    return [
        LabeledItem(
            id=f"q{i}",
            question=f"question {i}",
            answer=f"answer {i}",
            label=h,
            criteria={"correctness": CORRECT[i][0]},
            judge=JudgeRecord(score=s, criteria={"correctness": CORRECT[i][1]}, version="j@1"),
        )
        for i, (s, h) in enumerate(zip(SCORES, HUMAN, strict=True))
    ]


def test_agreement_by_hand() -> None:
    a = agreement(HUMAN, [s >= 0.575 for s in SCORES])
    assert a.confusion == {"tp": 4, "fp": 1, "fn": 1, "tn": 4}
    assert a.accuracy == 0.8 and a.kappa == pytest.approx(0.6)
    # unequal pass rates: p_o = .75, p_e = .75 * .5 + .25 * .5 = .5, kappa = .5
    assert agreement([True, True, True, False], [True, True, False, False]).kappa == 0.5
    # p_o = .6, p_e = .8 * .8 + .2 * .2 = .68, kappa = (.6 - .68) / .32 = -.25
    skew = agreement([True] * 4 + [False], [True, True, True, False, True])
    assert skew.kappa == pytest.approx(-0.25)
    # both raters constant: chance agreement is total, kappa undefined
    assert agreement([True, True], [True, True]).kappa is None
    with pytest.raises(ValueError):
        agreement([True], [])


def test_threshold_choice() -> None:
    threshold, a = choose_threshold(SCORES, HUMAN)
    assert threshold == 0.575
    assert a.kappa == pytest.approx(0.6) and a.accuracy == 0.8
    assert choose_threshold([0.2, 0.8], [False, True])[0] == 0.5


def test_calibrate_overall_and_per_criterion() -> None:
    labelled = items()
    cal = calibrate(labelled, [i.judge for i in labelled if i.judge], judge_version="j@1")
    assert (cal.n, cal.threshold, cal.accuracy) == (10, 0.575, 0.8)
    assert cal.kappa == pytest.approx(0.6)
    assert cal.confusion == {"tp": 4, "fp": 1, "fn": 1, "tn": 4}
    # correctness at .575: judge passes items 1-4 -> tp 3 (1, 2, 4), fp 1 (3), fn 2 (5, 7),
    # tn 4; p_o = .7, p_e = .5 * .4 + .5 * .6 = .5, kappa = .4
    per = cal.per_criterion["correctness"]
    assert per.confusion == {"tp": 3, "fp": 1, "fn": 2, "tn": 4}
    assert per.accuracy == 0.7 and per.kappa == pytest.approx(0.4)


def write_labels(path: Path, with_judge: bool = True) -> Path:
    lines = []
    for item in items():
        row = item.model_dump(mode="json")
        if not with_judge:
            row.pop("judge")
        lines.append(json.dumps(row))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_cli_calibrate_from_recorded_judge_outputs(tmp_path: Path) -> None:
    labels = write_labels(tmp_path / "human.jsonl")
    out = tmp_path / "cal" / "calibration.json"
    result = CliRunner().invoke(
        app, ["judge", "calibrate", "--labels", str(labels), "--out", str(out), "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["threshold"] == 0.575 and data["kappa"] == pytest.approx(0.6)
    assert data["confusion"] == {"tp": 4, "fp": 1, "fn": 1, "tn": 4}
    assert data["judge_version"] == "j@1" and len(data["labels_sha256"]) == 64
    assert Calibration.load(out).model_dump(mode="json") == data


def test_cli_and_loader_errors(tmp_path: Path) -> None:
    labels = write_labels(tmp_path / "human.jsonl", with_judge=False)
    result = CliRunner().invoke(app, ["judge", "calibrate", "--labels", str(labels)])
    assert result.exit_code == 2 and "give --judge" in result.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "answer": "x"}\n')
    with pytest.raises(ConfigError, match=r"bad\.jsonl:1: label"):
        load_labels(bad)
    bad.write_text('{"id": "a", "label": true}\n{"id": "a", "label": false}\n')
    with pytest.raises(ConfigError, match="unique"):
        load_labels(bad)
