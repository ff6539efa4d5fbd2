"""swe intake: every name and size an agent can write is checked where the workspace takes
it in (editor tools and the files a command leaves), so nothing downstream, the judge
included, ever sees a file it cannot take."""

from __future__ import annotations

import pytest
from swe_helpers import call, play, result, verdict

from gymforge.envs.swe import FAMILIES
from gymforge.envs.swe.intake import MAX_FILE_CHARS, MAX_FILES, take_in
from gymforge.sandbox import SandboxJob
from gymforge.sandbox.doctor import bwrap_works
from gymforge.sandbox.intake import refusal


@pytest.mark.parametrize(
    "name", ["..oops", "a/..b", "pkg/mod.py", ".github/ci.yml", "x.gf-scratch", "a/.gf-x"]
)
def test_ordinary_names_are_taken_and_the_sandbox_takes_them_too(name: str) -> None:
    assert refusal(name) is None
    SandboxJob(source="", files={name: "x"})  # the job the judge builds accepts the name


@pytest.mark.parametrize(
    "name",
    [
        "",
        "/etc/passwd",
        "../up",
        "a/../../up",
        "a//b",
        "a/./b",
        "a/",
        ".",
        "..",
        ".gf-scratch/x",
        ".gf-entry.py",
        ".gf-boot/sitecustomize.py",
        "bad\udcffname",
        "ctl\x01",
        "nul\x00",
        "x" * 300,
        "/".join(["d"] * 40),
    ],
)
def test_unacceptable_names_are_refused_with_a_reason(name: str) -> None:
    assert refusal(name)


def test_take_in_keeps_text_and_says_what_it_left_out() -> None:
    before = {"a.py": "1\n", "gone.py": "x\n"}
    raw = {
        "a.py": b"2\n",
        "new.py": b"ok\n",
        "__pycache__/a.cpython-311.pyc": b"\0",
        "bin.dat": b"\xff\xfe",
        ".gf-scratch/x": b"x",
        "big.txt": b"x" * (MAX_FILE_CHARS + 1),
    }
    taken = take_in(before, raw)
    assert taken.kept and taken.files == {"a.py": "2\n", "new.py": "ok\n"}
    assert taken.changed == ["a.py", "gone.py", "new.py"]
    assert set(taken.left_out) == {"bin.dat", ".gf-scratch/x", "big.txt"}
    note = taken.note() or ""
    assert "'bin.dat' (binary" in note and ".gf-scratch/x" in note


def test_take_in_keeps_nothing_when_the_caps_would_break() -> None:
    before = {"a.py": "1\n"}
    raw = {f"f{i}.py": b"x" for i in range(MAX_FILES + 1)}
    taken = take_in(before, raw)
    assert not taken.kept and taken.files is before and taken.changed == []
    assert "not kept" in (taken.note() or "")


@pytest.mark.skipif(not bwrap_works()[0], reason="bubblewrap unavailable")
def test_what_a_command_writes_is_checked_and_the_episode_is_judged() -> None:
    tid = FAMILIES[0].task_id(1, 3)
    commands = [
        'sh -c "touch \\"$(printf \'bad\\\\377name\')\\""',
        "sh -c 'ln -s /etc/passwd link.py; mkfifo fifo; echo ok'",
        "sh -c 'i=0; while [ $i -lt 230 ]; do echo x > f$i.py; i=$((i+1)); done'",
        "python -c \"open('big.txt', 'w').write('x' * 250000)\"",
        'sh -c \'printf x > "$(printf "ctl\\\\001")"\'',
        "sh -c 'echo x > ..oops'",
    ]
    _, steps = play(tid, [call("run_command", command=c) for c in commands])
    reports = [result(s)["result"] for s in steps[: len(commands)]]
    assert [r["exit_code"] for r in reports] == [0] * len(commands)
    assert [r["files_changed"] for r in reports] == [[], [], [], [], [], ["..oops"]]
    assert "not valid UTF-8" in reports[0]["note"]
    assert reports[1]["note"] is None  # links and fifos never come back from a job
    assert "not kept: the repository would exceed" in reports[2]["note"]
    assert "longer than" in reports[3]["note"] and "control character" in reports[4]["note"]
    assert "verifier_error" not in steps[-1].info
    assert verdict(steps)["reason"] == "hidden_tests_failed"
