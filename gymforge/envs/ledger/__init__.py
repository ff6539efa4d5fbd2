"""The reference tool-use environment."""

from gymforge.envs.ledger.env import LedgerEnv

__all__ = ["LedgerEnv"]
