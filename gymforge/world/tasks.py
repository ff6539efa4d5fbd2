"""Task families for worlds: generated tasks are memoised, since regenerating a world's
seed rows on every ``reset`` would cost more than restoring the database itself."""

from __future__ import annotations

from collections import OrderedDict

from gymforge.core.types import Task
from gymforge.tasks.family import TaskFamily
from gymforge.tasks.truth import TruthT

_CACHE: OrderedDict[tuple[str, int, str], Task] = OrderedDict()
CACHE_SIZE = 512


class WorldFamily(TaskFamily[TruthT]):
    """A ``TaskFamily`` whose ``resolve`` is an LRU over task ids. Tasks are frozen models
    and a pure function of their id, so the cache cannot leak state between episodes."""

    def resolve(self, task_id: str) -> Task:
        key = (self.name, self.version, task_id)
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
            return hit
        task = _CACHE[key] = super().resolve(task_id)
        if len(_CACHE) > CACHE_SIZE:
            _CACHE.popitem(last=False)
        return task
