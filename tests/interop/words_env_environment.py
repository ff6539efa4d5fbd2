"""An OpenEnv environment with OpenEnv's Task API, dropped into an ``openenv init`` template
in place of its echo environment (``tests/interop/test_openenv_tasks.py``).

Task ``(split, index)`` names a word; the agent must say it. The reward is 1.0 for the word
and 0.0 otherwise, and the first message ends the episode. ``train`` has 40 tasks and ``test``
(an evaluation split) 10.
"""

from typing import Any

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import State

try:
    from ..models import WordsAction, WordsObservation
except ImportError:
    from models import WordsAction, WordsObservation

WORDS = {
    "train": [f"{a}{b}" for a in ("red", "blue", "green", "gold") for b in "abcdefghij"],
    "test": [f"violet{c}" for c in "abcdefghij"],
}


class WordsEnvironment(Environment):
    SUPPORTS_CONCURRENT_SESSIONS: bool = True

    def __init__(self) -> None:
        self._state = State(episode_id=None, step_count=0)
        self._word = ""

    def list_splits(self) -> list[Any]:
        return [{"name": "train", "type": "train"}, {"name": "test", "type": "test"}]

    def num_tasks(self, split: str) -> int:
        return len(WORDS[split])

    def list_tasks(self, split: str) -> list[Any]:
        return [self.get_task(split, i) for i in range(len(WORDS[split]))]

    def get_task(self, split: str, index: int) -> Any:
        return {"id": f"{split}-{index}", "index": index, "word": WORDS[split][index]}

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        split: str = "train",
        index: int = 0,
        **kwargs: Any,
    ) -> WordsObservation:
        self._state = State(episode_id=episode_id, step_count=0)
        self._word = WORDS[split][index]
        return WordsObservation(echoed_message=f"Say the word {self._word}", done=False, reward=0.0)

    def step(self, action: WordsAction) -> WordsObservation:  # type: ignore[override]
        self._state.step_count += 1
        right = action.message.strip() == self._word
        return WordsObservation(
            echoed_message=action.message,
            message_length=len(action.message),
            done=True,
            reward=1.0 if right else 0.0,
        )

    @property
    def state(self) -> State:
        return self._state
