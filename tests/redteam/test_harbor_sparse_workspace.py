"""Attack: the agent leaves a sparse file in its workspace (``truncate -s``: gigabytes that
cost its container no disk). The engine copies the workspace out to this host to be judged
and writes every byte of it, so each episode can fill the runner's disk for free (a 1 GB
sparse file became 1.1 GB on the host before the fix). Success would be a workspace copied
out larger than the cap. gymforge measures the engine's tar stream of the stopped
container first, dropping it as it reads, and a workspace past ``WORKSPACE_CAP`` is a
failure (``workspace_too_large``) with nothing written here and no verifier run; the cap is
lowered for the test so it stays cheap.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from harbor_attack import CONTAINERS, play

from gymforge.core.types import Reply, ToolCall
from gymforge.envs.harbor import container

pytestmark = CONTAINERS


def test_a_sparse_file_in_the_workspace_is_not_copied_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(container, "WORKSPACE_CAP", 64 << 20)
    copied: list[Path] = []
    real_copy = container.AgentBox.copy_out

    async def spy(self: container.AgentBox, path: str, dest: Path) -> bool:
        copied.append(dest)
        return await real_copy(self, path, dest)

    monkeypatch.setattr(container.AgentBox, "copy_out", spy)
    grow = ToolCall(
        name="run", arguments={"command": "truncate -s 256M /app/big && ls -ls /app/big"}
    )
    last, _ = play([grow, Reply(text="Done.")], naive=False)
    verdict = last.info["verdict"]
    assert not last.info["success"] and verdict["reason"] == "workspace_too_large", verdict
    assert copied == []  # nothing of it reached this host
    assert last.reward == pytest.approx(0.0)
