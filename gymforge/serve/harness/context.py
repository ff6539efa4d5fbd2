"""What a harness gets for one episode (:class:`HarnessContext`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class HarnessContext:
    """What a harness gets for one episode. ``episode_id`` is an opaque random handle;
    ``api_key`` is the episode's own token (its proxy URL and its MCP URL, or in workspace
    mode its shell URL, only). A workspace harness has ``shell_url`` and no ``mcp_url``
    or ``tools``; its ``prompt`` is its instruction."""

    episode_id: str
    base_url: str
    api_key: str
    model: str
    prompt: str
    mcp_url: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    sampling_seed: int = 0
    shell_url: str = ""

    @property
    def mcp_headers(self) -> dict[str, str]:
        """The header the MCP endpoint wants (the same bearer token as the proxy)."""
        return {"Authorization": f"Bearer {self.api_key}"}
