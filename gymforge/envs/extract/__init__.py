"""Structured extraction from generated documents, graded field by field."""

from gymforge.envs.extract.env import FAMILIES, HELD_OUT_FAMILY, ExtractEnv

__all__ = ["FAMILIES", "HELD_OUT_FAMILY", "ExtractEnv"]
