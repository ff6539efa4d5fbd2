"""The context length a server's ``/v1/models`` lists (vLLM's ``max_model_len``), asked for
a ``vllm:`` factory whose turns have no other bound to read it from (a local template: no
``/tokenize`` answer states it).

Every first turn of a run starts at once, and without ``--max-tokens`` the context length is
a turn's only bound. So one request is in flight at a time (per event loop) and every turn
that needs the answer waits for it, instead of the first turn asking while the others go
without a bound. The request is retried as the completions are (``call_with_retries``); a
server that still fails leaves the length unknown for that turn, and a later turn asks
again. An answer, even one that lists no length (or a refusal, such as a 404), is final.
"""

from __future__ import annotations

import asyncio
import random
from typing import TYPE_CHECKING, Any

import openai

from gymforge.core.seeding import derive_seed
from gymforge.rollout.server import PolicyRequestRejected, PolicyServerError, call_with_retries

if TYPE_CHECKING:
    from gymforge.rollout.server import ServerFactory


class ModelsWindow:
    """``/v1/models`` asked on behalf of one factory: at most one request in flight per event
    loop, until one is answered (``answered``)."""

    def __init__(self) -> None:
        self.answered = False
        self._asking: dict[asyncio.AbstractEventLoop, asyncio.Task[int | None]] = {}
        self._rng = random.Random(derive_seed("vllm-models-backoff"))

    async def ask(self, factory: ServerFactory, model: str) -> int | None:
        """The context length listed for ``model`` (else for the one model there is: vLLM
        may serve one model under several names), or None; the request in flight if there
        is one (a waiter cancelled leaves it running for the others)."""
        loop = asyncio.get_running_loop()
        asking = self._asking.get(loop)
        if asking is None:
            asking = self._asking[loop] = loop.create_task(self._ask(factory, model))
            asking.add_done_callback(lambda _: self._asking.pop(loop, None))
        return await asyncio.shield(asking)

    async def _ask(self, factory: ServerFactory, model: str) -> int | None:
        try:
            models, _ = await call_with_retries(
                factory, self._rng, lambda: factory.client().models.list()
            )
        except PolicyRequestRejected:  # refused (a server without the endpoint): final
            self.answered = True
            return None
        except (PolicyServerError, openai.OpenAIError):  # still failing: asked again later
            return None
        self.answered = True
        lens = {m.id: getattr(m, "max_model_len", None) for m in models.data}
        n = lens.get(model, next(iter(lens.values())) if len(lens) == 1 else None)
        return n if type(n) is int and n > 0 else None

    def __getstate__(self) -> dict[str, Any]:  # picklable for Ray: no request travels
        return {"answered": self.answered}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__()  # type: ignore[misc]
        self.answered = state["answered"]
