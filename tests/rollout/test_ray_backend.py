"""The Ray executor through the one runner: on a local ``ray.init`` (async actors, each
episode written exactly once, a killed actor costs no job and duplicates none), and, in
``make test-slow``, on a real two-node cluster whose second node is killed mid-run."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gymforge.core.types import Observation
from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout import OraclePolicy, PolicyTurn, RunSpec, expand, run
from gymforge.trajectory.check import check_file as check_sealed
from gymforge.trajectory.io import read_episodes, verify_chain

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.xdist_group("ray")  # one local Ray cluster at a time under xdist

from gymforge.rollout.executors.ray import RayExecutor  # noqa: E402

PAIRS = [(t, 5) for t in LedgerEnv.tasks.sample(20, 0)]
JOBS = expand(PAIRS, group=2)  # 40 episodes


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    os.environ["RAY_AUTH_MODE"] = "disabled"
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # SlowOracle below
    try:
        yield
    finally:
        ray.shutdown()


def check_file(out: Path, n: int) -> list[Any]:
    """Every job's episode is in the file exactly once, each with a verified chain."""
    logs = read_episodes(out / "trajectories.jsonl")
    for log in logs:
        verify_chain(log)
    keys = Counter((g.end.task_id, g.end.seed, g.end.rollout) for g in logs if g.end)
    assert len(logs) == n and len(keys) == n and max(keys.values()) == 1
    assert set(keys) == {j.key for j in JOBS}
    assert len({g.episode_id for g in logs}) == n
    return logs


def spec(out: Path, **kw: Any) -> RunSpec:
    return RunSpec(env="ledger", policy="oracle", backend="ray", jobs=JOBS, out=out, **kw)


def test_ledger_oracle_through_ray(local_ray: None, tmp_path: Path) -> None:
    key = b"ray driver seal key"
    executor = RayExecutor(actors=2, max_concurrency=8)
    result = asyncio.run(run(spec(tmp_path, seal_key=key), executor))
    s = result.summary
    assert s["episodes"] == 40 and s["success_rate"] == 1.0 and s["backend"] == "ray"
    assert s["infra_errors"] == 0 and s["actor_restarts"] == 0 and result.errors == []
    logs = check_file(tmp_path, 40)
    assert {g.episode_id for g in logs} == {f"{s['run_id']}-{j.index:06d}" for j in JOBS}
    assert (tmp_path / "summary.json").exists()
    sealed = check_sealed(tmp_path / "trajectories.jsonl", key)
    assert sealed.finished and sealed.run_seals == 1 and len(sealed.episodes) == 40


class SlowOracle(OraclePolicy):
    """The oracle, 50 ms per turn: keeps episodes in flight long enough to kill an actor."""

    delay = 0.05

    async def act(self, observation: Observation) -> PolicyTurn:
        await asyncio.sleep(self.delay)
        return await super().act(observation)


class SlowerOracle(SlowOracle):
    """200 ms per turn: the run outlasts a node's death by seconds."""

    delay = 0.2


def test_killed_actor_jobs_complete_exactly_once(local_ray: None, tmp_path: Path) -> None:
    actors: list[Any] = []
    killed: list[Any] = []

    def on_episode(_rec: dict[str, Any]) -> None:
        if not killed and actors:
            killed.append(actors[0])
            ray.kill(actors[0], no_restart=True)  # mid-run: the other jobs are in flight

    executor = RayExecutor(
        policy=SlowOracle,
        actors=2,
        max_concurrency=8,
        on_actors=lambda handles: actors.__setitem__(slice(None), handles),
    )
    result = asyncio.run(run(spec(tmp_path), executor, on_episode=on_episode))
    s = result.summary
    assert killed and s["actor_restarts"] == 1 and s["infra_retries"] >= 1
    assert s["episodes"] == 40 and s["success_rate"] == 1.0 and s["infra_errors"] == 0
    check_file(tmp_path, 40)


# --------------------------------------------------------------------------- two nodes

RAY = str(Path(sys.executable).with_name("ray"))
FAST_NODE_DEATH = {  # the GCS declares a silent node dead after ~1.5 s, not ~15 s
    "RAY_health_check_period_ms": "500",
    "RAY_health_check_timeout_ms": "500",
    "RAY_health_check_failure_threshold": "3",
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start_node(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """``ray start ... --block`` in its own session: the node's raylet, GCS (head) and
    workers are its process group, so killing that group kills exactly this node."""
    with open(log, "wb") as fh:
        return subprocess.Popen(
            [RAY, "start", "--block", "--node-ip-address=127.0.0.1", *args],
            env=env,
            stdout=fh,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _node_processes(group: int) -> list[int]:
    """The processes of the node whose ``ray start`` leads process group ``group``: the
    group itself, and its descendants (Ray's workers start sessions of their own)."""
    parents: dict[int, int] = {}
    members: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # it exited meanwhile
        pid, ppid, pgid = int(entry.name), int(fields[1]), int(fields[2])
        parents[pid] = ppid
        if pgid == group:
            members.add(pid)
    grew = True
    while grew:
        more = {pid for pid, ppid in parents.items() if ppid in members} - members
        members |= more
        grew = bool(more)
    return sorted(members)


def _kill_node(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the whole node at once (as a machine dying would), then reap its leader."""
    for pid in _node_processes(proc.pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    proc.wait(timeout=30)


def _wait_for_nodes(n: int, deadline_s: float) -> None:
    deadline = time.monotonic() + deadline_s
    while sum(node["Alive"] for node in ray.nodes()) < n:
        assert time.monotonic() < deadline, f"the cluster never had {n} live nodes"
        time.sleep(0.2)


@pytest.mark.slow
def test_two_node_cluster_losing_a_node_loses_and_duplicates_no_episode(tmp_path: Path) -> None:
    """Actors pinned one per node by the nodes' own resources; the second node's process
    group is SIGKILLed once both actors have finished episodes; every job is still in
    the log exactly once (its in-flight attempts retried on a replacement actor)."""
    if ray.is_initialized():
        ray.shutdown()
    port = _free_port()
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", **FAST_NODE_DEATH}
    nodes: list[subprocess.Popen[bytes]] = []
    # private temp dirs (short: they hold unix sockets), so that no other Ray on this
    # machine finds this cluster's address file, and cleanup touches nothing else
    temp = [tempfile.mkdtemp(prefix="gf-ray-"), tempfile.mkdtemp(prefix="gf-ray-")]
    try:
        common = ["--num-cpus=1", "--disable-usage-stats"]
        head = [f"--port={port}", "--head", "--include-dashboard=false", '--resources={"head": 1}']
        head.append(f"--temp-dir={temp[0]}")
        nodes.append(_start_node([*head, *common], env, tmp_path / "head.log"))
        address = f"127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while True:  # the head takes a few seconds to accept the second node
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                assert nodes[0].poll() is None, (tmp_path / "head.log").read_text()
                assert time.monotonic() < deadline, "the head node never listened"
                time.sleep(0.2)
        second = [f"--address={address}", '--resources={"node2": 1}', f"--temp-dir={temp[1]}"]
        second += common
        nodes.append(_start_node(second, env, tmp_path / "node2.log"))
        os.environ["RAY_AUTH_MODE"] = "disabled"
        ray.init(address=address, log_to_driver=False)
        ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
        _wait_for_nodes(2, 90)

        actors: list[Any] = []
        where: list[dict[str, Any]] = []
        finished: list[int] = []

        def on_episode(_rec: dict[str, Any]) -> None:
            finished.append(1)
            if where or len(finished) < 8:
                return
            where.extend(ray.get([a.ready.remote() for a in actors[:2]], timeout=30))
            if min(w["played"] for w in where) > 0:  # both nodes have played episodes
                _kill_node(nodes[1])  # mid-run: both actors have episodes in flight
            else:
                where.clear()

        executor = RayExecutor(
            policy=SlowerOracle,
            actors=2,
            max_concurrency=4,
            actor_options={"num_cpus": 0},
            slot_options=[{"resources": {"head": 0.01}}, {"resources": {"node2": 0.01}}],
            on_actors=lambda handles: actors.__setitem__(slice(None), handles),
        )
        run_spec = spec(tmp_path / "run", max_retries=3)
        result = asyncio.run(asyncio.wait_for(run(run_spec, executor, on_episode=on_episode), 240))
        assert where and nodes[1].poll() is not None, "the second node was never killed"
        assert len({w["node"] for w in where}) == 2  # one actor on each node
        s = result.summary
        assert s["actor_restarts"] >= 1 and s["infra_retries"] >= 1
        assert s["episodes"] == 40 and s["infra_errors"] == 0 and result.errors == []
        assert s["success_rate"] == 1.0
        check_file(tmp_path / "run", 40)
    finally:
        if ray.is_initialized():
            ray.shutdown()
        for proc in reversed(nodes):
            _kill_node(proc)
        for path in temp:
            shutil.rmtree(path, ignore_errors=True)
