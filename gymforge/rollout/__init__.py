"""Rollouts: policies, scripted baselines, the episode loop, the runner and its executors."""

from gymforge.core.policy import CaptureLevel, EpisodeContext, Policy, PolicyTurn
from gymforge.rollout.capture import CapturedTurn, turn_record
from gymforge.rollout.episode import run_episode
from gymforge.rollout.executors import Executor, LocalExecutor
from gymforge.rollout.jobs import Job, epoch_jobs, expand
from gymforge.rollout.runner import RunResult, run, run_sync
from gymforge.rollout.scripted import (
    NoopPolicy,
    OraclePolicy,
    RandomPolicy,
    scripted_policy,
)
from gymforge.rollout.spec import RunSpec
from gymforge.rollout.summary import group_stats, summarize
from gymforge.trajectory.schema import EpisodeKeys

__all__ = [
    "CaptureLevel",
    "CapturedTurn",
    "EpisodeContext",
    "EpisodeKeys",
    "Executor",
    "Job",
    "LocalExecutor",
    "NoopPolicy",
    "OraclePolicy",
    "Policy",
    "PolicyTurn",
    "RandomPolicy",
    "RunResult",
    "RunSpec",
    "epoch_jobs",
    "expand",
    "group_stats",
    "run",
    "run_episode",
    "run_sync",
    "scripted_policy",
    "summarize",
    "turn_record",
]
