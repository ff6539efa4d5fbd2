"""Shared pieces of the attacks on a Verifiers rubric (``vf_eval_rubric.py``), imported as a
plain module: judging one completion through the real ``verifiers:`` adapter in this
process, and a policy file that answers every task with one completion."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

REF = "verifiers:tests.interop.vf_eval_rubric"

SCORER_UID_BASE = 100_000 + (os.getpid() % 5000) * 100 + 40
"""The scorer sandbox's uids for this test process, apart from other tests' sandboxes."""


def use_test_uids(monkeypatch: Any) -> None:
    monkeypatch.setenv("GYMFORGE_SANDBOX_UID_BASE", str(SCORER_UID_BASE - 64))


def judge(completion: str, row: int = 0) -> dict[str, Any]:
    """The verdict (plus ``verifier_error``) on ``completion`` for training row ``row``."""
    from gymforge.core import SyncEnvironment
    from gymforge.core.types import Reply
    from gymforge.registry.resolve import make_env

    inner = make_env(REF)
    task_id = inner.tasks.datasets[0].tasks[row].task_id  # type: ignore[attr-defined]
    env = SyncEnvironment(inner)
    try:
        env.reset(task_id, 0)
        step = env.step(Reply(text=completion))
        return {**step.info["verdict"], "verifier_error": bool(step.info.get("verifier_error"))}
    finally:
        env.close()


def attack_policy_file(tmp: Path, completion: str) -> str:
    """A ``path/to/file.py:policy`` spec whose policy replies ``completion`` to every task."""
    path = tmp / "vf_attack_policy.py"
    path.write_text(
        "from gymforge.core.policy import PolicyTurn\n"
        "from gymforge.core.types import Reply\n"
        f"TEXT = {completion!r}\n"
        "class Fixed:\n"
        "    name = checkpoint = 'vf-attack'\n"
        "    async def start(self, ctx):\n"
        "        pass\n"
        "    async def act(self, observation):\n"
        "        return PolicyTurn(Reply(text=TEXT))\n"
        "def policy():\n"
        "    return Fixed()\n"
    )
    return f"{path}:policy"
