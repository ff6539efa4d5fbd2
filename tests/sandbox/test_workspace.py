"""``SandboxJob.keep_files``: a program job hands back its directory's files, so a caller (the
multi-turn ``code-agent`` environment) can carry a workspace from one job to the next without
pinning a worker. Every job still starts in a fresh directory and leaves nothing behind."""

from __future__ import annotations

import pytest

from gymforge.sandbox import Limits, SandboxJob, Status
from gymforge.sandbox.local import LocalBackend

WRITER = """
import os
open('notes.txt', 'w').write('kept')
os.makedirs('deep/er', exist_ok=True)
open('deep/er/data.bin', 'wb').write(bytes(range(256)))
os.symlink('/etc/passwd', 'link')
os.mkfifo('pipe')
"""


def test_files_come_back_and_carry_into_the_next_job(sandbox: LocalBackend) -> None:
    r = sandbox.run(SandboxJob(source=WRITER, keep_files=True))
    assert r.status is Status.OK, r
    assert r.files == {"notes.txt": b"kept", "deep/er/data.bin": bytes(range(256))}
    assert not r.files_truncated  # symlinks and fifos are not files: never followed, not kept
    nxt = sandbox.run(
        SandboxJob(
            source="import os\nprint(open('notes.txt').read(), len(open('deep/er/data.bin','rb')"
            ".read()), sorted(os.listdir('.')))",
            files=r.files,
        )
    )
    assert nxt.status is Status.OK
    assert nxt.stdout.split()[:2] == ["kept", "256"]
    assert nxt.files is None  # not asked for


def test_a_job_without_the_files_sees_a_fresh_directory(sandbox: LocalBackend) -> None:
    sandbox.run(SandboxJob(source=WRITER, keep_files=True))
    for _ in range(3):  # whichever worker runs it
        r = sandbox.run(SandboxJob(source="import os\nprint(sorted(os.listdir('.')))"))
        assert r.stdout.strip() == "['main.py']"


def test_caps_leave_files_out_and_say_so(sandbox: LocalBackend) -> None:
    src = "open('big', 'wb').write(b'y' * 5000)\nopen('small', 'w').write('s')\n"
    r = sandbox.run(SandboxJob(source=src, keep_files=True, limits=Limits(workspace_bytes=1000)))
    assert r.files == {"small": b"s"} and r.files_truncated
    many = "for i in range(300):\n    open(f'f{i:03}', 'w').write('x')\n"
    r = sandbox.run(SandboxJob(source=many, keep_files=True))
    assert r.files is not None and len(r.files) == 256 and r.files_truncated


def test_files_are_kept_after_a_crash_and_a_timeout(sandbox: LocalBackend) -> None:
    crash = "open('before', 'w').write('1')\nimport os\nos.abort()\n"
    r = sandbox.run(SandboxJob(source=crash, keep_files=True))
    assert r.status is Status.RUNTIME_ERROR and r.files == {"before": b"1"}
    slow = "open('before', 'w').write('1')\nimport time\ntime.sleep(30)\n"
    r = sandbox.run(SandboxJob(source=slow, keep_files=True, limits=Limits(wall_time=0.5)))
    assert r.status is Status.TIMEOUT and r.files == {"before": b"1"}


def test_keep_files_is_for_program_jobs() -> None:
    from gymforge.sandbox import Call

    with pytest.raises(ValueError, match="program jobs"):
        SandboxJob(source="def f(): pass", calls=[Call(name="f")], keep_files=True)


def test_the_source_wins_over_a_workspace_file_of_the_same_name(sandbox: LocalBackend) -> None:
    r = sandbox.run(SandboxJob(source="print('real')", files={"main.py": "print('planted')"}))
    assert r.stdout == "real\n"
    c = '#include <stdio.h>\nint main(){puts("real c");}'
    r = sandbox.run(SandboxJob(language="c", source=c, files={"main.c": "int main(){return 3;}"}))
    assert r.status is Status.OK and r.stdout == "real c\n"


def test_a_main_file_name_keeps_a_workspace_file_called_main(sandbox: LocalBackend) -> None:
    """``main_file`` names the job's entry file, so a workspace's own ``main.py`` runs as it
    is and comes back unchanged (the entry file is never handed back)."""
    files: dict[str, str | bytes] = {"main.py": "print('repo main')\n"}
    src = "import runpy\nrunpy.run_path('main.py', run_name='__main__')\nprint(__file__[-12:])"
    job = SandboxJob(source=src, files=files, main_file=".gf-entry.py", keep_files=True)
    r = sandbox.run(job)
    assert r.status is Status.OK and r.stdout == "repo main\n.gf-entry.py\n", r
    assert r.files == {"main.py": b"print('repo main')\n"}


@pytest.mark.parametrize("name", ["main.py", "a/entry.py", "../entry.py", ".gf-scratch", ""])
def test_a_main_file_name_is_a_plain_name_no_job_file_has(name: str) -> None:
    with pytest.raises(ValueError, match=r"main_file|relative path"):
        SandboxJob(source="", files={"main.py": "x"}, main_file=name)


def test_a_name_that_only_starts_with_two_dots_is_a_file(sandbox: LocalBackend) -> None:
    r = sandbox.run(SandboxJob(source="print(open('..oops').read())", files={"..oops": "mine"}))
    assert r.stdout == "mine\n", r
    for bad in ("..", "../x", "a/../../x"):
        with pytest.raises(ValueError, match="relative path"):
            SandboxJob(source="", files={bad: "x"})
