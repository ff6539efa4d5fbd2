"""Attack: reuse another job's compiled program from the sandbox's artefact cache.

In a GRPO group, one sibling answers a stdio task correctly in C++; its compiled program is
cached. A Python answer that solves nothing walks the cache, runs the newest program it finds
on its own stdin and prints what that prints. If this passes, one correct sibling hands the
reward to every other member of the group (and to every later run on the machine): the
cache must be private to the job that runs each artefact.
"""

from __future__ import annotations

from typing import Any

from gymforge.sandbox import SandboxJob, Status
from gymforge.sandbox.local import LocalBackend
from gymforge.verify.code import CodeJudge

SUM_CPP = r"""
#include <iostream>
int main() { long long a, b; std::cin >> a >> b; std::cout << a * 7 + b << "\n"; }
"""

TASK: dict[str, Any] = {
    "kind": "stdio",
    "tests": [
        {"input": "3 4\n", "output": "25\n"},
        {"input": "10 -2\n", "output": "68\n"},
        {"input": "0 9\n", "output": "9\n"},
    ],
}

CACHE_WALKER = r"""
import os, subprocess, sys
data = sys.stdin.read()
found = []
for top in ("/cache", "/var/tmp", "/tmp", "/.gymforge", "/judge", os.getcwd(), "/"):
    for root, dirs, files in os.walk(top):
        if root.startswith(("/proc", "/sys", "/dev", "/usr", "/etc")):
            dirs[:] = []
            continue
        for f in files:
            p = os.path.join(root, f)
            try:
                if os.access(p, os.X_OK) and os.path.getsize(p) > 1000:
                    found.append((os.path.getmtime(p), p))
            except OSError:
                pass
for _, p in sorted(found, reverse=True):
    try:
        r = subprocess.run([p], input=data, capture_output=True, text=True, timeout=1)
    except Exception:
        continue
    if r.returncode == 0 and r.stdout.strip():
        sys.stdout.write(r.stdout)
        break
print("FOUND", len(found), file=sys.stderr)
"""


def test_a_python_answer_cannot_borrow_a_siblings_compiled_program(
    code_judge: CodeJudge,
) -> None:
    honest = code_judge.judge(TASK, f"```cpp\n{SUM_CPP}```", "cpp")
    assert honest.passed, honest  # the sibling is right, and its program is now cached
    hack = code_judge.judge(TASK, f"```python\n{CACHE_WALKER}```", "python", detail=True)
    assert not hack.passed, "a Python answer passed by running another job's artefact"
    assert hack.score == 0.0, hack.facts


def test_the_cache_is_not_visible_to_jobs(sandbox: LocalBackend, run_job: Any) -> None:
    sandbox.run(SandboxJob(language="cpp", source=SUM_CPP, stdin="1 2\n"))  # something is cached
    r = run_job(
        "import os\n"
        "for p in ('/cache', '/var/tmp', '/tmp'):\n"
        "    try:\n"
        "        print(p, sorted(os.listdir(p)))\n"
        "    except OSError as e:\n"
        "        print(p, type(e).__name__)\n"
    )
    assert r.status is Status.OK, r
    lines = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    assert lines["/cache"] == "FileNotFoundError", r.stdout
    assert lines["/var/tmp"] == "FileNotFoundError", r.stdout
    assert lines["/tmp"] == "['job']", r.stdout


def test_a_compiled_job_sees_only_its_own_artefact(sandbox: LocalBackend) -> None:
    other = SUM_CPP.replace("* 7", "* 5")
    assert sandbox.run(SandboxJob(language="cpp", source=other, stdin="1 1\n")).stdout == "6\n"
    spy = r"""
#include <cstdio>
#include <dirent.h>
#include <unistd.h>
int main() {
    const char* dirs[] = {"/cache", "/tmp", "/tmp/job", "."};
    for (const char* d : dirs) {
        DIR* h = opendir(d);
        if (!h) { std::printf("%s -\n", d); continue; }
        while (dirent* e = readdir(h))
            if (e->d_name[0] != '.') std::printf("%s %s\n", d, e->d_name);
        closedir(h);
    }
    char self[4096] = {0};
    if (readlink("/proc/self/exe", self, sizeof self - 1) > 0) std::printf("exe %s\n", self);
}
"""
    for _ in range(2):  # the second run comes from the cache
        r = sandbox.run(SandboxJob(language="cpp", source=spy))
        assert r.status is Status.OK, r
        lines = r.stdout.splitlines()
        assert "/cache -" in lines, r.stdout
        exe = next(ln.split(" ", 1)[1] for ln in lines if ln.startswith("exe "))
        assert exe.startswith("/tmp/job/"), exe
        listed = {ln.split(" ", 1)[1] for ln in lines if ln.startswith("/tmp/job ")}
        assert listed <= {"main.cpp", exe.rsplit("/", 1)[1]}, r.stdout
    assert r.compile_cached, r
