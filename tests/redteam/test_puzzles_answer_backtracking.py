"""Attack: stall the puzzles judge, on the event loop, with runs of blanks in one answer line.

The knights-and-knaves checker read each ``Name is a knight`` item with a regular
expression whose blanks are ``\\s*`` next to ``\\s+`` twice over; the answer
``a`` + 995 spaces + ``is`` + 995 spaces + ``1`` (1,994 characters, under the 2,000-character
answer cap) made it try every split of both runs: cubic, about 20 s of CPU for one reply
(1.1 s at 400 spaces a run), in the environment's own ``verify`` on the event loop that
served sessions share. The shortest-path checker split an answer on separators with blanks
around them, quadratic on a run of blanks (tens of ms per reply, where the threat model
promises a few). Success would mean a policy choosing seconds of judge time per reply. The
defence: the items are matched on the answer with each run of blanks made one space (the
patterns read blanks only as ``\\s*`` or ``\\s+``, so they accept exactly what they
accepted: ``test_same_readings``), and the path is split on the bare separators, each node
then stripped; the bombs run in a child under a CPU limit far above what a linear pass needs.
"""

from __future__ import annotations

import random
import re
import subprocess

import pytest
from cpu_capped import run_capped

from gymforge.envs.puzzles import shortest_path
from gymforge.verify.puzzles import knights_knaves

CPU_LIMIT_S = 8  # a linear pass takes milliseconds; the cubic one took about 20 s


def _run_capped(code: str) -> subprocess.CompletedProcess[str]:
    return run_capped(code, CPU_LIMIT_S)


BOMBS = {
    # one reply, judged through the environment as a policy's reply is
    "knights_knaves": ("puzzles.knights_knaves", "'a' + ' ' * 995 + 'is' + ' ' * 995 + '1'", 1),
    # a thousand replies of one long blank run between two nodes (about 20 ms of CPU each)
    "shortest_path": ("puzzles.shortest_path", "'A' + ' ' * 1997 + 'B'", 1000),
}


@pytest.mark.parametrize("family", sorted(BOMBS))
def test_a_run_of_blanks_is_read_in_linear_time(family: str) -> None:
    name, answer, replies = BOMBS[family]
    done = _run_capped(
        f"""
        import sys
        sys.path.insert(0, ".")
        from gymforge.core import Reply, SyncEnvironment
        from gymforge.envs.puzzles import PuzzlesEnv

        env = SyncEnvironment(PuzzlesEnv())
        sampled = PuzzlesEnv.tasks.sample(50, 1, "train")
        task_id = next(t for t in sampled if t.startswith("{name}/"))
        reply = "Answer: " + {answer}
        assert len(reply) < 2_010, len(reply)
        for _ in range({replies}):
            env.reset(task_id, 0)
            verdict = env.step(Reply(text=reply)).info["verdict"]
            assert verdict["passed"] is False, verdict
        print(verdict["reason"])
        """
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout.strip() in ("parse_error", "unknown_node")


_OLD_SEP = re.compile(r"\s*(?:->|→|-|,)\s*")
_BLANKS = (" ", "  ", "\t", " \n ", "\u00a0", "")


def _variants(r: random.Random, text: str, n: int) -> list[str]:
    """``text`` with blanks of other kinds and lengths put in at random places."""
    out = []
    for _ in range(n):
        chars = [c + r.choice(_BLANKS) if r.random() < 0.3 else c for c in text]
        out.append(r.choice(_BLANKS) + "".join(chars) + r.choice(_BLANKS))
    return out


def test_same_readings() -> None:
    """Blanks put anywhere in right and wrong answers change no verdict's outcome against
    the patterns as they read the unsqueezed text."""
    r = random.Random(7)
    fam = knights_knaves.FAMILY
    for seed in range(20):
        _, truth = fam.build({"people": 3, "kinds": "logic"}, random.Random(seed))
        names = truth.names
        right = ", and ".join(
            f"{n} is a {knights_knaves.label(k)}"
            for n, k in zip(names, truth.solution or [], strict=True)
        )
        for answer in [right, right.replace(" is a ", "="), f"{names[0]} is an knight"]:
            for variant in _variants(r, answer, 20):
                items = knights_knaves._AND.split(variant.strip().rstrip(".").replace(";", ","))
                parses = all(knights_knaves._ITEM_V2.fullmatch(i) for i in items)
                outcome = fam.check(truth, variant)
                assert parses or outcome.reason == "parse_error", (variant, outcome)
                if parses:
                    assert outcome.reason != "parse_error", (variant, outcome)
    for variant in _variants(r, "A -> B->C - D , E-->F", 200):
        old = [s.upper() for s in _OLD_SEP.split(variant.strip().rstrip("."))]
        assert shortest_path.steps_of(variant) == old, variant
