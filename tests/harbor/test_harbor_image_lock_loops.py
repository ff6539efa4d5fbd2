"""Two episodes that need the same Harbor image at once wait for one build; a second event
loop in the same process (a second ``run`` from a notebook or script, each with its own
``asyncio.run``) does the same. The build locks were module-level ``asyncio.Lock``s, one per
image tag, shared by every loop: a lock waited on once is bound to the loop it was waited
on in, so the second loop's episodes that waited for the same image failed with
"RuntimeError: ... is bound to a different event loop". No engine is needed: the image is
found to exist already (``_exists``), held until both episodes are at the lock."""

from __future__ import annotations

import asyncio
import threading
from types import SimpleNamespace
from typing import Any

import pytest

from gymforge.envs.harbor import images

TAG = "gymforge-harbor-demo:000000000000"


def test_two_event_loops_each_wait_for_the_same_image(monkeypatch: pytest.MonkeyPatch) -> None:
    looked: list[str] = []
    entered = threading.Event()  # the first episode is inside the lock, asking the engine
    gate = threading.Event()  # the engine answers

    def exists(tag: str) -> bool:
        looked.append(tag)
        entered.set()
        assert gate.wait(30), "the test never let the engine answer"
        return True

    monkeypatch.setattr(images, "image_tag", lambda task: TAG)
    monkeypatch.setattr(images, "_exists", exists)
    task: Any = SimpleNamespace(name="demo")

    async def both_at_once() -> list[str]:
        entered.clear()
        gate.clear()
        first = asyncio.create_task(images.ensure_image(task))
        for _ in range(3000):  # bounded: until the first holds the lock
            if entered.is_set():
                break
            await asyncio.sleep(0.01)
        assert entered.is_set(), "the first episode never asked for the image"
        second = asyncio.create_task(images.ensure_image(task))
        for _ in range(5):  # the second runs up to the held lock and waits there
            await asyncio.sleep(0)
        assert not second.done(), second.exception()  # waiting for the first, not failed
        gate.set()
        return list(await asyncio.gather(first, second))

    assert asyncio.run(both_at_once()) == [TAG, TAG]
    assert asyncio.run(both_at_once()) == [TAG, TAG]  # a new loop: raised before
    assert looked == [TAG] * 4  # each episode asked once, one at a time
