"""Bands, retirement reasons and the decisive flag."""

from __future__ import annotations

import pytest

from gymforge.calibrate import Band, calibration_row, classify
from gymforge.calibrate.bands import no_band_reason
from gymforge.core.errors import UserError


def test_band_parse() -> None:
    assert Band.parse("0.02,0.70") == Band(0.02, 0.70)
    assert Band.parse("2%, 70%") == Band(0.02, 0.70)
    for bad in ("0.7,0.02", "0.1", "a,b", "0.1,1.5", "-0.1,0.5"):
        with pytest.raises(UserError):
            Band.parse(bad)


@pytest.mark.parametrize(
    ("c", "n", "status", "reason"),
    [
        (0, 8, "retired", "zero_variance"),
        (8, 8, "retired", "zero_variance"),
        (1, 100, "retired", "too_hard"),
        (3, 100, "in_band", None),
        (7, 10, "in_band", None),
        (6, 8, "retired", "too_easy"),
        (0, 0, "retired", "no_data"),
    ],
)
def test_classify(c: int, n: int, status: str, reason: str | None) -> None:
    assert classify(c, n, Band())[:2] == (status, reason)


def test_zero_variance_detail_names_the_direction() -> None:
    assert "failed" in classify(0, 8, Band())[2]
    assert "succeeded" in classify(8, 8, Band())[2]


def test_decisive_only_when_the_interval_agrees_with_the_call() -> None:
    band = Band()
    assert calibration_row({}, 0, 200, band)["decisive"] is True  # [0, 0.019] < 0.02
    assert calibration_row({}, 0, 8, band)["decisive"] is False  # [0, 0.32] reaches the band
    assert calibration_row({}, 100, 100, band)["decisive"] is True
    assert calibration_row({}, 60, 200, band)["decisive"] is True  # 0.30 [0.24, 0.37]
    assert calibration_row({}, 1, 3, band)["decisive"] is False  # [0.06, 0.79]
    row = calibration_row({"task_id": "x"}, 3, 8, band)
    assert row["task_id"] == "x" and row["lo"] < row["pass_rate"] < row["hi"]


def test_no_band_reason() -> None:
    assert "--samples" in no_band_reason({"zero_variance": 5}, 1)
    assert "too_hard" in no_band_reason({"zero_variance": 1, "too_hard": 4}, 8)
    assert "no task" in no_band_reason({}, 8)
