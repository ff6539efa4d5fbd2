"""gymforge: seeded, verifiable, QA-checked environments for RL with LLMs."""

__version__ = "0.1.0"
