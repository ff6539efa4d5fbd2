"""Two judges decoding the same dataclass shape at once get one class for it. Dataclass
values cross the sandbox boundary as a shape (``stdvalues``) that the decoder makes a class
of, once per shape, so that two decodes of equal values compare equal: a generated
``__eq__`` is False for an instance of another class. The class was made under
``functools.lru_cache``, which does not hold back a second caller while the first makes it:
two threads judging at once (HumanEval and MBPP judges run in ``asyncio.to_thread``, a
group's episodes of one task at the same moment) could each make a class, and a judge that
then compared a value it had decoded before with one decoded after failed a correct
answer. The second thread is forced in while the first makes the class."""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

import pytest

from gymforge.sandbox.plainvalues import loads_plain

SHAPE = '{"$dataclass": ["ThreadedPoint", [true, false, false], [["x", 1], ["y", 2]]]}'


def test_two_threads_decoding_one_new_shape_get_one_class(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    make = dataclasses.make_dataclass
    inside = threading.Condition()
    arrived = [0]  # threads inside make_dataclass

    def slow_make(*args: Any, **kwargs: Any) -> Any:
        with inside:
            arrived[0] += 1
            inside.notify_all()
            # Wait (bounded) for the other thread to get here too: it can while nothing
            # holds it back; with the class made under a lock it cannot, and this goes on
            # after 0.5 s.
            inside.wait_for(lambda: arrived[0] >= 2, timeout=0.5)
        return make(*args, **kwargs)

    monkeypatch.setattr(dataclasses, "make_dataclass", slow_make)
    decoded: list[Any] = []
    failures: list[BaseException] = []

    def decode() -> None:
        try:
            decoded.append(loads_plain(SHAPE))
        except BaseException as err:  # collected for the assertion below
            failures.append(err)

    threads = [threading.Thread(target=decode) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert failures == [] and len(decoded) == 2
    first, second = decoded
    assert first == second  # a correct answer compared with its own copy
    assert type(first) is type(second)
    assert loads_plain(SHAPE) == first  # and with a later decode
