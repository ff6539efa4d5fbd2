"""Adapters to the tools gymforge users already run: TRL, Gymnasium."""
