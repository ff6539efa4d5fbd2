"""Where episodes run: the executors of ``gymforge.rollout.runner.run``.

- ``LocalExecutor`` (``local.py``): this process's event loop;
- ``RayExecutor`` (``ray.py``): async Ray actors, on one machine or a cluster;
- ``RedisExecutor`` (``redis.py``): ``gymforge worker`` processes behind a Redis stream
  (the workers: ``redis_worker.py``; the stream entries and the failures they report:
  ``redis_entries.py``).

``executor_for`` picks one by a spec's ``backend``, as the CLI does. The Ray and Redis
modules import their client libraries only when used (the ``ray`` / ``redis`` extras).
"""

from __future__ import annotations

from typing import Any

from gymforge.core.errors import UserError
from gymforge.registry.handle import EnvHandle
from gymforge.rollout.executors.base import Executor, ExecutorDown, play_attempt
from gymforge.rollout.executors.local import LocalExecutor
from gymforge.rollout.resolve import PolicySource, with_run_hidden
from gymforge.rollout.spec import RunSpec

__all__ = ["Executor", "ExecutorDown", "LocalExecutor", "executor_for", "play_attempt"]


def executor_for(
    spec: RunSpec,
    handle: EnvHandle,
    source: PolicySource,
    *,
    backend_url: str | None = None,
    policy_options: dict[str, Any] | None = None,
) -> Executor:
    """The executor of ``spec.backend``: ``local`` plays ``handle``'s environments with
    ``source``'s policies here; ``ray`` (``backend_url``: the cluster address, if any) and
    ``redis`` (``backend_url``: the Redis URL) resolve the environment and policy from
    their names on each worker, with ``policy_options`` (``base_url`` among them; a workspace
    harness's ``shell`` is not passed on: each worker takes its own environment's; the run's
    directory is added to what a ``harness-cmd:`` program must not see)."""
    if spec.backend == "local":
        return LocalExecutor(handle.factory, source.factory, close_policy=source.close)
    options = {k: v for k, v in (policy_options or {}).items() if v is not None and k != "shell"}
    options = with_run_hidden(options, spec.policy, spec.out)
    if spec.backend == "redis":
        if not backend_url:
            raise UserError("--backend redis needs --redis URL")
        from gymforge.rollout.executors.redis import RedisExecutor

        return RedisExecutor(backend_url, policy_options=options)
    try:
        from gymforge.rollout.executors.ray import RayExecutor
    except ImportError as err:  # pragma: no cover - only without the extra
        raise UserError(f"--backend ray is unavailable: {err}") from err
    return RayExecutor(address=backend_url, policy_options=options)
