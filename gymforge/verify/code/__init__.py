"""Honest code judging (see ``judge`` for what is trusted, and ``remote`` for what crosses
into the sandbox when a test's values are not plain data)."""

from gymforge.verify.code.extract import extract_code
from gymforge.verify.code.judge import CodeJudge
from gymforge.verify.code.shared import (
    JudgeConfig,
    close_shared_backend,
    normalise_output,
    shared_backend,
    strict_equal,
)

__all__ = [
    "CodeJudge",
    "JudgeConfig",
    "close_shared_backend",
    "extract_code",
    "normalise_output",
    "shared_backend",
    "strict_equal",
]
