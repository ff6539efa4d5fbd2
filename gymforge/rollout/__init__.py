"""Rollouts: policies, scripted baselines, the episode loop and the runner."""

from gymforge.rollout.episode import EpisodeKeys, run_episode
from gymforge.rollout.policy import CaptureLevel, EpisodeContext, Policy, PolicyTurn
from gymforge.rollout.runner import RunResult, run, summarize
from gymforge.rollout.scripted import (
    NoopPolicy,
    OraclePolicy,
    RandomPolicy,
    scripted_policy,
)

__all__ = [
    "CaptureLevel",
    "EpisodeContext",
    "EpisodeKeys",
    "NoopPolicy",
    "OraclePolicy",
    "Policy",
    "PolicyTurn",
    "RandomPolicy",
    "RunResult",
    "run",
    "run_episode",
    "scripted_policy",
    "summarize",
]
