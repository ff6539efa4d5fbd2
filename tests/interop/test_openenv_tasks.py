"""An OpenEnv environment that implements OpenEnv's Task API: its splits are gymforge's task
families, its ``test`` split the held-out one, and ``reset`` gets the task's ``(split, index)``.
The server is an ``openenv init`` template whose environment module is replaced by
``words_env_environment.py`` and whose session cap is raised to 4 (the template's own
invitation); it runs under the template's own uvicorn app."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from interop_helpers import by_name, needs, qa_report
from openenv_server import openenv_init, serve

pytestmark = needs("openenv")

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    env_dir = openenv_init("words_env", tmp_path_factory.mktemp("openenv"))
    shutil.copy(HERE / "words_env_environment.py", env_dir / "server" / "words_env_environment.py")
    app = env_dir / "server" / "app.py"
    text = app.read_text()
    assert "max_concurrent_envs=1," in text
    app.write_text(text.replace("max_concurrent_envs=1,", "max_concurrent_envs=4,"))
    with serve(env_dir) as url:
        yield url


@pytest.fixture(scope="module")
def report(server: str) -> dict[str, Any]:
    return qa_report(f"openenv:{server}", "--episodes", "12")


def test_task_api_report(report: dict[str, Any]) -> None:
    checks = by_name(report)
    assert report["not_applicable"] == ["scripted_baselines", "verifier_redteam", "error_paths"]
    for name in (
        "replay_determinism",
        "reset_isolation",  # four sessions: the check's two instances both get one
        "truncation_accounting",
        "distribution_audit",
        "throughput",
        "trajectory_schema",
        "heldout_exclusion",
    ):
        assert checks[name]["status"] == "pass", checks[name]
    assert report["passed"] is True
    held = checks["heldout_exclusion"]["details"]
    assert "held-out tasks refused by check_train" in held
    assert "0.0% duplicates" in checks["distribution_audit"]["details"]


def test_reset_gets_the_task(server: str) -> None:
    import asyncio

    from gymforge.core.types import Reply
    from gymforge.registry.resolve import make_env

    env = make_env(f"openenv:{server}")
    tasks = env.tasks  # type: ignore[attr-defined]

    async def play(task_id: str, say: str | None) -> tuple[str, float, bool]:
        obs = await env.reset(task_id, 0)
        text = obs.messages[0].content
        word = text.split("Say the word ")[1].split('"')[0]
        result = await env.step(Reply(text=word if say is None else say))
        return word, result.reward, result.terminated

    held = tasks.sample(3, 1, "heldout")
    assert all(tasks.resolve(t).family == "openenv.words_env.test" for t in held)
    word, reward, terminated = asyncio.run(play(held[0], None))
    assert word.startswith("violet") and reward == 1.0 and terminated
    train = tasks.sample(1, 1, "train")[0]
    word, reward, terminated = asyncio.run(play(train, "nope"))
    assert not word.startswith("violet") and reward == 0.0 and terminated
    asyncio.run(env.close())
