"""Rollouts: policies, scripted baselines, the episode loop and the runner."""

from gymforge.core.policy import CaptureLevel, EpisodeContext, Policy, PolicyTurn
from gymforge.rollout.episode import run_episode
from gymforge.rollout.runner import Job, RunResult, expand, run
from gymforge.rollout.scripted import (
    NoopPolicy,
    OraclePolicy,
    RandomPolicy,
    scripted_policy,
)
from gymforge.rollout.summary import group_stats, summarize
from gymforge.trajectory.schema import EpisodeKeys

__all__ = [
    "CaptureLevel",
    "EpisodeContext",
    "EpisodeKeys",
    "Job",
    "NoopPolicy",
    "OraclePolicy",
    "Policy",
    "PolicyTurn",
    "RandomPolicy",
    "RunResult",
    "expand",
    "group_stats",
    "run",
    "run_episode",
    "scripted_policy",
    "summarize",
]
