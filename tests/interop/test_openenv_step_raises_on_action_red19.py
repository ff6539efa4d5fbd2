"""Attack: on the tasks it fails, send the action the served OpenEnv environment's ``step``
raises on, and have the episode retried as the server failing, then left unwritten.

The OpenEnv adapter (``openenv:URL``) read any failure of the server's ``step`` as the
server's (``InfraError``: retried, unscored). But the step carries the policy's action, and
a served environment can have a bug an action reaches: here ``step`` raises ``KeyError`` on
a hint topic it does not expect (``trap_env_environment.py``, an ``openenv init`` template
with its environment module replaced, served by the template's own uvicorn app). Over its
100 word tasks, a policy that says the word on the 50 it knows and asks ``hint:anything``
on the rest had only its successes written (50 episodes, mean reward 1.0, every failure
retried and given up), against the plain failer's 100 episodes and mean reward 0.5. An
action after which the environment's ``state`` raises (``mark:x``: the runner snapshots
after every step) did the same.

The defence (``OpenEnvEnv``, the rule of ``gymforge.core.blame``): a failed step (or the
``state`` after it, now read within the step) is probed on a new session with the
episode's own reset (none of the agent's actions); when the server answers it, the episode
is replayed there and the action sent once more, and a second failure is the agent's: the
episode ends, counted (``env_failed_on_action``, the server's error in the verdict's
facts). A failure that does not recur goes on, on the new session; a server that does not
answer the probe (down, restarted, at capacity) is still infrastructure, retried.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from interop_helpers import needs
from openenv_server import openenv_init, serve

pytestmark = needs("openenv")

HERE = Path(__file__).parent
TRAP = "hint:anything"  # step raises
MARK = "mark:x"  # step answers; state raises after it
TASKS = 100


@pytest.fixture(scope="module")
def env_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    env_dir = openenv_init("trap_env", tmp_path_factory.mktemp("openenv"))
    shutil.copy(HERE / "trap_env_environment.py", env_dir / "server" / "trap_env_environment.py")
    app = env_dir / "server" / "app.py"
    text = app.read_text()
    assert "max_concurrent_envs=1," in text
    app.write_text(text.replace("max_concurrent_envs=1,", "max_concurrent_envs=4,"))
    return env_dir


@pytest.fixture(scope="module")
def server(env_dir: Path) -> Iterator[str]:
    with serve(env_dir) as url:
        yield url


class KnowsHalf:
    """Says the word of the ``red``/``blue`` tasks; ``miss`` on the ``green``/``gold`` ones."""

    checkpoint = "planted"

    def __init__(self, miss: str) -> None:
        self.name = "knows-half"
        self.miss = miss

    async def start(self, ctx: Any) -> None:
        pass

    async def act(self, observation: Any) -> Any:
        from gymforge.core.policy import PolicyTurn
        from gymforge.core.types import Reply

        word = observation.messages[-1].content.split("Say the word ")[1].split('"')[0]
        knows = word.startswith(("red", "blue"))
        return PolicyTurn(Reply(text=word if knows else self.miss))


def play(url: str, policy: Callable[[], Any], out: Path) -> Any:
    """A run of every task of the trap server at ``url`` with ``policy()``'s episodes."""
    from gymforge.envs.openenv_adapter.env import env_class
    from gymforge.rollout.executors.local import LocalExecutor
    from gymforge.rollout.jobs import Job
    from gymforge.rollout.runner import run_sync
    from gymforge.rollout.spec import RunSpec

    env = env_class(url)
    ids = [task.task_id for ds in env().tasks.datasets for task in ds]
    assert len(set(ids)) == TASKS
    spec = RunSpec(
        env=f"openenv:{url}",
        policy="knows-half",
        jobs=[Job(i, task_id, 7, 0) for i, task_id in enumerate(ids)],
        out=out,
        max_retries=1,
        stop_after_failed_tasks=None,
    )
    return run_sync(spec, LocalExecutor(env, policy))


@pytest.mark.parametrize(
    ("trap", "detail"), [(TRAP, "'anything'"), (MARK, "invalid literal")], ids=["step", "state"]
)
def test_an_action_the_server_fails_on_is_a_counted_failure(
    server: str, tmp_path: Path, trap: str, detail: str
) -> None:
    honest = play(server, lambda: KnowsHalf("nope"), tmp_path / "honest")
    assert not honest.errors and honest.summary["episodes"] == TASKS
    assert honest.summary["mean_reward"] == 0.5
    trapped = play(server, lambda: KnowsHalf(trap), tmp_path / "trap")
    assert not trapped.errors, trapped.errors
    assert trapped.summary["infra_retries"] == 0
    assert trapped.summary["episodes"] == TASKS
    assert trapped.summary["mean_reward"] == 0.5
    assert trapped.summary["failure_reasons"] == {
        "env_failed_on_action": TASKS // 2,
        "no_success_signal": TASKS // 2,
    }
    lines = (tmp_path / "trap" / "trajectories.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    verdicts = [r["info"]["verdict"] for r in records if "verdict" in r.get("info", {})]
    failed = [v for v in verdicts if v["reason"] == "env_failed_on_action"]
    assert len(failed) == TASKS // 2
    for verdict in failed:  # the server's error: the KeyError's key, the ValueError's text
        assert detail in verdict["facts"]["server_error"], verdict


def test_a_hint_it_knows_goes_on(server: str) -> None:
    from gymforge.core.types import Reply
    from gymforge.envs.openenv_adapter.env import env_class

    async def play_one() -> tuple[float, bool]:
        env = env_class(server)()
        task_id = env.tasks.datasets[0].tasks[3].task_id
        obs = await env.reset(task_id, 0)
        word = obs.messages[0].content.split("Say the word ")[1].split('"')[0]
        hint = await env.step(Reply(text="hint:length"))
        assert (
            not hint.terminated and f"{len(word)} letters" in hint.observation.messages[0].content
        )
        result = await env.step(Reply(text=word))
        await env.close()
        return result.reward, result.terminated

    reward, terminated = asyncio.run(play_one())
    assert reward == 1.0 and terminated


def test_the_episode_replayed_fails_on_the_action_again(server: str) -> None:
    from gymforge.core.types import Reply
    from gymforge.envs.openenv_adapter.env import env_class

    async def play_one() -> list[Any]:
        env = env_class(server)()
        await env.reset(env.tasks.datasets[0].tasks[60].task_id, 0)
        results = [await env.step(Reply(text=say)) for say in ("hint:length", TRAP)]
        await env.close()
        return results

    hint, failed = asyncio.run(play_one())
    assert not hint.terminated
    assert failed.terminated and failed.reward == 0.0 and not failed.info["success"]
    verdict = failed.info["verdict"]
    assert verdict["reason"] == "env_failed_on_action"
    assert "EXECUTION_ERROR" in verdict["facts"]["server_error"]


def test_a_passing_fault_goes_on_on_a_new_session(server: str) -> None:
    from gymforge.core.types import Reply
    from gymforge.envs.openenv_adapter.env import env_class

    async def play_one() -> list[Any]:
        env = env_class(server)()
        obs = await env.reset(env.tasks.datasets[0].tasks[7].task_id, 0)
        word = obs.messages[0].content.split("Say the word ")[1].split('"')[0]
        says = ("hint:length", "hint:flaky", word)
        results = [await env.step(Reply(text=say)) for say in says]
        await env.close()
        return [word, *results]

    word, hint, flaky, said = asyncio.run(play_one())
    assert not hint.terminated and not flaky.terminated
    assert f'"echoed_message":"{word[-1]}"' in flaky.observation.messages[0].content
    assert said.terminated and said.reward == 1.0


def test_a_server_gone_mid_episode_is_still_infrastructure(env_dir: Path) -> None:
    from gymforge.core.errors import InfraError
    from gymforge.core.types import Reply
    from gymforge.envs.openenv_adapter.env import env_class

    with serve(env_dir) as url:  # a second server of the same environment, stopped below
        env = env_class(url)()
        asyncio.run(env.reset(env.tasks.datasets[0].tasks[75].task_id, 0))
    # the server is stopped: the step and the probe both fail

    async def step() -> None:
        await env.step(Reply(text=TRAP))

    with pytest.raises(InfraError) as raised:
        asyncio.run(step())
    assert raised.value.retryable
    assert "failed on step" in str(raised.value)
