"""Attack: cut a resumed sealed run back to its first run seal.

A sealed run of 2 episodes is resumed with ``-n 4`` (``n`` may grow), which appends two
episodes and a second run seal. The attacker, without the key, cuts the file back to the
end of the first run seal: every line left is genuinely sealed and the file ends in a run
seal. Success would mean ``verify-log`` and ``replay`` call the cut file a finished run,
so half of a run (say, the episodes before a bad stretch) could be passed off as all of it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from redteam_logs import KEY, cli, read


def _run(out: Path, n: int, *extra: str) -> None:
    done = cli("run", "ledger", "--policy", "oracle", "-n", str(n), "--out", out, *extra, key=KEY)
    assert done.code == 0, done.stderr


def test_a_resumed_run_cut_back_to_its_first_run_seal_is_unfinished(tmp_path: Path) -> None:
    out = tmp_path / "run"
    _run(out, 2)
    first = (out / "trajectories.jsonl").read_bytes()
    _run(out, 4, "--resume")
    path = out / "trajectories.jsonl"
    whole = path.read_bytes()
    assert len(read(path)) > len(first.splitlines())
    assert cli("verify-log", out, key=KEY).code == 0  # the genuine resumed run is finished

    lines = whole.splitlines(keepends=True)
    seals = [i for i, line in enumerate(lines) if b'"record":"run_seal"' in line]
    assert len(seals) == 2, "a resumed run ends with its own run seal"
    cut = tmp_path / "cut"
    shutil.copytree(out, cut)
    (cut / "trajectories.jsonl").write_bytes(b"".join(lines[: seals[0] + 1]))
    assert len(read(cut / "trajectories.jsonl")) == len(first.splitlines())

    for command in ("verify-log", "replay"):
        found = cli(command, cut / "trajectories.jsonl", key=KEY)
        assert found.code == 3, (command, found.code, found.stderr)
        assert "unfinished" in found.stderr, found.stderr
