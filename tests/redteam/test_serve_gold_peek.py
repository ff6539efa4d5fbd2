"""Attack: peek at the gold answer in a second WebSocket session, then pass first try.

An agent holding the session token it was given opens a second session on the same server,
plays the same task there, answers "no idea", and reads the verdict's facts in the
``step_result`` (the math verifier's ``gold``). Back in the session it is evaluated in, it
submits that answer and passes on its first attempt. Success of the attack would mean a
served environment pays a policy that never solved the task; facts that reveal the answer
must never leave a server started without ``--qa-hooks``.
"""

from __future__ import annotations

from gold_peek import shows, task_with_long_gold
from redteam_serve import TOKEN, Raw


def test_a_side_session_shows_no_gold(serve: object) -> None:
    task_id, gold = task_with_long_gold()
    server = serve("math", token=TOKEN)  # type: ignore[operator]
    with Raw(server) as given, Raw(server) as side:
        side.ask({"type": "reset", "task_id": task_id, "seed": 0})
        failed = side.ask({"type": "step", "action": {"kind": "reply", "text": "no idea"}})
        assert failed["type"] == "step_result" and failed["terminated"], failed
        assert failed["info"]["verdict"]["passed"] is False
        leaked = shows(failed, gold)
        passed = None
        if leaked:  # what the leak buys: the given session passes on its first answer
            given.ask({"type": "reset", "task_id": task_id, "seed": 0})
            answer = {"kind": "reply", "text": f"\\boxed{{{gold}}}"}
            passed = given.ask({"type": "step", "action": answer})["info"]["success"]
        assert not leaked, f"the side session showed the gold {gold!r}; first try passed={passed}"
        assert "gold" not in failed["info"]["verdict"]["facts"]
