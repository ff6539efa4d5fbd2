"""``spreadsheet``: a workbook world with real formulas, pivot tables and ``.xlsx`` files."""

from gymforge.envs.spreadsheet.env import SpreadsheetEnv

__all__ = ["SpreadsheetEnv"]
