"""An OpenEnv environment whose ``step`` raises on a message it does not expect, dropped
into an ``openenv init`` template in place of its echo environment
(``tests/redteam/test_openenv_step_raises_on_action_red19.py``, run by ``make test-interop``).

Task ``(train, index)`` names a word; the agent must say it (reward 1.0, else 0.0; the word
or a wrong word ends the episode). ``hint:TOPIC`` answers a hint and goes on, but only for
the topics it knows: any other topic raises ``KeyError`` out of ``step``, the kind of bug in
a served environment that a policy's action can reach. The environment is deterministic:
the same reset and the same actions give the same answers and the same failure, except
``hint:flaky``, which fails the first time a server process is asked it (a passing fault
of the server's) and answers a hint after that. ``mark:N`` notes a number and goes on; its
``state`` reads the number as an ``int``, so after ``mark:`` of something else ``state``
raises ``ValueError`` (the step itself answered). ``claim:NAME`` claims a name and goes on,
once per server process: the names live in the process (as in a store its sessions share),
so claiming one already claimed, on any session, raises ``ValueError``: an action that does
not replay as it first ran.
"""

from typing import Any

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import State

try:
    from ..models import TrapAction, TrapObservation
except ImportError:
    from models import TrapAction, TrapObservation

WORDS = [f"{a}{b}" for a in ("red", "blue", "green", "gold") for b in "abcdefghijklmnopqrstuvwxy"]
FLAKED: set[str] = set()
CLAIMED: set[str] = set()


class TrapEnvironment(Environment):
    SUPPORTS_CONCURRENT_SESSIONS: bool = True

    def __init__(self) -> None:
        self._state = State(episode_id=None, step_count=0)
        self._word = ""
        self._mark = ""

    def list_splits(self) -> list[Any]:
        return [{"name": "train", "type": "train"}]

    def num_tasks(self, split: str) -> int:
        return len(WORDS)

    def list_tasks(self, split: str) -> list[Any]:
        return [self.get_task(split, i) for i in range(len(WORDS))]

    def get_task(self, split: str, index: int) -> Any:
        return {"id": f"{split}-{index}", "index": index}

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        split: str = "train",
        index: int = 0,
        **kwargs: Any,
    ) -> TrapObservation:
        self._state = State(episode_id=episode_id, step_count=0)
        self._word = WORDS[index]
        self._mark = ""
        return TrapObservation(echoed_message=f"Say the word {self._word}", done=False, reward=0.0)

    def step(self, action: TrapAction) -> TrapObservation:  # type: ignore[override]
        self._state.step_count += 1
        text = action.message.strip()
        if text == "hint:flaky" and text not in FLAKED:
            FLAKED.add(text)
            raise RuntimeError("a passing fault")
        if text.startswith("claim:"):
            name = text[len("claim:") :]
            if name in CLAIMED:  # ValueError: claimed already, on this or another session
                raise ValueError(f"{name!r} is claimed already")
            CLAIMED.add(name)
            return TrapObservation(echoed_message="claimed", done=False, reward=0.0)
        if text.startswith("mark:"):
            self._mark = text[len("mark:") :]
            return TrapObservation(echoed_message="noted", done=False, reward=0.0)
        if text.startswith("hint:"):
            hints = {"length": f"{len(self._word)} letters", "flaky": self._word[-1]}
            hint = hints[text[len("hint:") :]]  # KeyError: a topic it does not expect
            return TrapObservation(echoed_message=hint, done=False, reward=0.0)
        return TrapObservation(
            echoed_message=text, done=True, reward=1.0 if text == self._word else 0.0
        )

    @property
    def state(self) -> State:
        if self._mark:  # ValueError: a mark it does not expect
            return State(**self._state.model_dump(), mark=int(self._mark))
        return self._state
