"""``gymforge serve --record`` (WebSocket): every episode a session starts is written, the
finished ones as the runner writes them, the others truncated with how they ended; the
record is sealed with a key, verifies, and replays; without ``--record`` nothing is kept."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from serve_helpers import TOKEN, Raw

from gymforge.envs.math.env import MathEnv
from gymforge.registry.resolve import make_env
from gymforge.rollout.replay import replay_file
from gymforge.serve.config import ServeConfig
from gymforge.serve.launch import ServerThread, build_app
from gymforge.trajectory.check import check_file
from gymforge.trajectory.io import read_episodes

KEY = b"test-seal-key-0123456789"


def _server(record: Path | None, **config: object) -> ServerThread:
    cfg = ServeConfig(token=TOKEN, **config)  # type: ignore[arg-type]
    return ServerThread("math", cfg, app=build_app("math", cfg, record=record, seal_key=KEY))


def _play(record: Path | None) -> ServerThread:
    env = MathEnv()
    task_id = env.tasks.sample(1, seed=5)[0]
    answer = env.oracle_plan(env.tasks.resolve(task_id))[-1].model_dump(mode="json")
    server = _server(record)
    with server, contextlib.ExitStack() as held:
        raw = held.enter_context(Raw(server))
        raw.ask({"type": "reset", "task_id": task_id, "seed": 0})  # abandoned by the next
        raw.ask({"type": "reset", "task_id": task_id, "seed": 1})
        assert raw.ask({"type": "step", "action": answer})["info"]["success"] is True
        with Raw(server) as gone:  # disconnects mid-episode
            gone.ask({"type": "reset", "task_id": task_id, "seed": 2})
        held.enter_context(Raw(server)).ask({"type": "reset", "task_id": task_id, "seed": 3})
    return server


def test_every_started_episode_is_recorded_sealed_and_replays(tmp_path: Path) -> None:
    record = tmp_path / "ws.jsonl"
    _play(record)
    ends = {log.end.seed: log.end for log in read_episodes(record) if log.end is not None}
    assert sorted(ends) == [0, 1, 2, 3]
    assert ends[0].failure_reason == "abandoned" and ends[0].truncated
    assert ends[1].success and ends[1].failure_reason is None
    assert ends[2].failure_reason == "session_closed"
    assert ends[3].failure_reason in ("session_closed", "server_shutdown") and not ends[3].success
    check = check_file(record, KEY)
    assert check.finished and check.sealed and len(check.episodes) == 4
    assert asyncio.run(replay_file(record, make_env)).divergence is None


def test_without_record_nothing_is_kept(tmp_path: Path) -> None:
    server = _play(None)
    assert server.hub.recorder.writer is None and server.hub.recorder.episodes_written == 0
    assert list(tmp_path.iterdir()) == []
