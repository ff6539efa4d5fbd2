"""``crm``: accounts, contacts, opportunities and a sales pipeline over a SQLite world, with a
seeded requester who sometimes asks ambiguously."""

from gymforge.envs.crm.env import CrmEnv

__all__ = ["CrmEnv"]
