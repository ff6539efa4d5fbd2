"""Difficulty calibration: per-task pass rates with Wilson intervals, the pass-rate band,
zero-variance filtering, and feedback into the curriculum and the hard-negative pool."""

from gymforge.calibrate.bands import REASONS, Band, calibration_row, classify
from gymforge.calibrate.feedback import curriculum_feedback, feed_hard_negatives, level_rates
from gymforge.calibrate.pipeline import (
    CalibrateConfig,
    calibration_rows,
    load_task_file,
    select_tasks,
    write_calibration,
)

__all__ = [
    "REASONS",
    "Band",
    "CalibrateConfig",
    "calibration_row",
    "calibration_rows",
    "classify",
    "curriculum_feedback",
    "feed_hard_negatives",
    "level_rates",
    "load_task_file",
    "select_tasks",
    "write_calibration",
]
