"""The logic puzzles' families and validity checkers: countdown, knights and knaves, sudoku.

Two environments judge with them: the built-in ``puzzles`` environment, whose families they
are, and the reasoning-gym adapter, whose strict verifiers for the same puzzles
(``gymforge.envs.reasoning_gym.strict``) feed reasoning-gym's entries to these checkers. They
live below both, so that the built-in environments stay independent of each other (the
import-linter contract in ``pyproject.toml``). ``gymforge.envs.puzzles.<module>`` still
names each of them.
"""
