"""``SandboxJob.read_only_files``: the job's own files cannot be changed by the job, even for a
moment. The kernel (Landlock) refuses every write, create, rename, link, truncate or delete
under the job directory; only the job's scratch directory (``HOME`` and ``TMPDIR``) and the
devices under ``/dev`` stay writable. A plain job is unaffected."""

from __future__ import annotations

import pytest

from gymforge.sandbox import SandboxJob, Status
from gymforge.sandbox.landlock import SCRATCH, landlock_abi
from gymforge.sandbox.local import LocalBackend

pytestmark = pytest.mark.skipif(landlock_abi() < 1, reason="Landlock is not enabled here")

ATTEMPTS = r"""
import os, json
def attempt(name, fn):
    try:
        fn()
        out[name] = "done"
    except OSError as e:
        out[name] = type(e).__name__
out = {}
attempt("overwrite", lambda: open("pkg/mod.py", "w").write("x = 2\n"))
attempt("append", lambda: open("pkg/mod.py", "a").write("y = 3\n"))
attempt("truncate", lambda: os.truncate("pkg/mod.py", 0))
attempt("create", lambda: open("pkg/new.py", "x").write("z = 1\n"))
attempt("create_top", lambda: open("conftest.py", "w").write("import sys\n"))
attempt("mkdir", lambda: os.mkdir("pkg/sub"))
attempt("rename", lambda: os.rename("pkg/mod.py", "pkg/old.py"))
attempt("replace_by_rename", lambda: os.rename("pkg/other.py", "pkg/mod.py"))
attempt("unlink", lambda: os.unlink("pkg/other.py"))
attempt("rmdir_tree", lambda: os.rmdir("empty"))
attempt("symlink", lambda: os.symlink("/etc/passwd", "pkg/link"))
attempt("hardlink", lambda: os.link("pkg/mod.py", "pkg/hard.py"))
attempt("fifo", lambda: os.mkfifo("pkg/fifo"))
attempt("scratch_write", lambda: open(os.path.join(os.environ["TMPDIR"], "t"), "w").write("ok"))
attempt("scratch_mkdir", lambda: os.makedirs(os.path.join(os.environ["HOME"], "a/b")))
attempt("scratch_rename", lambda: os.rename(
    os.path.join(os.environ["TMPDIR"], "t"), os.path.join(os.environ["TMPDIR"], "u")))
attempt("escape_scratch", lambda: os.rename(
    os.path.join(os.environ["TMPDIR"], "u"), "pkg/mod.py"))
attempt("dev_null", lambda: open("/dev/null", "w").write("sink"))
print(json.dumps(out))
print(open("pkg/mod.py").read(), end="")
"""
FILES: dict[str, str | bytes] = {
    "pkg/mod.py": "x = 1\n",
    "pkg/other.py": "w = 0\n",
    "empty/.keep": "",
}
REFUSED = [
    "overwrite",
    "append",
    "truncate",
    "create",
    "create_top",
    "mkdir",
    "rename",
    "replace_by_rename",
    "unlink",
    "symlink",
    "hardlink",
    "fifo",
    "escape_scratch",
]


def _run(sandbox: LocalBackend, read_only: bool) -> tuple[dict[str, str], str]:
    import json

    r = sandbox.run(
        SandboxJob(source=ATTEMPTS, files=FILES, read_only_files=read_only, keep_files=True)
    )
    assert r.status is Status.OK, r
    first, _, rest = r.stdout.partition("\n")
    return json.loads(first), rest


def test_every_change_to_the_job_files_is_refused(sandbox: LocalBackend) -> None:
    out, content = _run(sandbox, read_only=True)
    assert [k for k in REFUSED if out[k] == "done"] == [], out
    assert out["overwrite"] == out["create"] == out["unlink"] == "PermissionError"
    assert content == "x = 1\n"
    for ok in ("scratch_write", "scratch_mkdir", "scratch_rename", "dev_null"):
        assert out[ok] == "done", (ok, out)


def test_the_files_come_back_unchanged(sandbox: LocalBackend) -> None:
    r = sandbox.run(SandboxJob(source=ATTEMPTS, files=FILES, read_only_files=True, keep_files=True))
    assert r.files is not None
    assert {p: d for p, d in r.files.items() if not p.startswith(SCRATCH + "/")} == {
        p: v.encode() if isinstance(v, str) else v for p, v in FILES.items()
    }


def test_a_plain_job_may_still_write(sandbox: LocalBackend) -> None:
    out, content = _run(sandbox, read_only=False)
    assert out["overwrite"] == out["create"] == out["mkdir"] == "done"
    assert content != "x = 1\n"


def test_children_and_exec_inherit_the_restriction(sandbox: LocalBackend) -> None:
    src = (
        "import subprocess, sys\n"
        "r = subprocess.run(['sh', '-c', 'echo hacked > pkg/mod.py'], capture_output=True)\n"
        "print(r.returncode, open('pkg/mod.py').read().strip())\n"
    )
    r = sandbox.run(SandboxJob(source=src, files=FILES, read_only_files=True))
    assert r.status is Status.OK, r
    code, _, content = r.stdout.partition(" ")
    assert code != "0" and content == "x = 1\n", r.stdout
    sh = SandboxJob(
        source="import os\nos.execv('/bin/sh', ['sh', '-c', 'echo x > pkg/mod.py; echo $?'])\n",
        files=FILES,
        read_only_files=True,
    )
    r = sandbox.run(sh)
    assert r.stdout.strip() != "0", r


def test_the_next_job_on_the_worker_is_not_restricted(sandbox: LocalBackend) -> None:
    for _ in range(3):  # every worker has run a read-only job; a plain one after it writes
        sandbox.run(SandboxJob(source="pass", files=FILES, read_only_files=True))
    for _ in range(4):
        r = sandbox.run(SandboxJob(source="open('f', 'w').write('1')\nprint('wrote')"))
        assert r.status is Status.OK and r.stdout.strip() == "wrote", r


def test_scratch_is_not_a_path_a_job_may_bring() -> None:
    with pytest.raises(ValueError, match="scratch"):
        SandboxJob(source="pass", files={f"{SCRATCH}/x": "1"}, read_only_files=True)


def test_calls_jobs_are_restricted_too(sandbox: LocalBackend) -> None:
    from gymforge.sandbox import Call, CallStatus

    cand = "def f():\n    open('pkg/mod.py', 'w').write('x = 2\\n')\n    return 'wrote'\n"
    job = SandboxJob(source=cand, files=FILES, calls=[Call(name="f")], read_only_files=True)
    r = sandbox.run(job)
    assert r.calls is not None and r.calls[0].status is CallStatus.EXCEPTION
    assert r.calls[0].error_type == "PermissionError", r.calls[0]
