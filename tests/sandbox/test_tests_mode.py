"""The in-sandbox test mode (fallback): judge-owned test code, results over a nonce-tagged
control channel, verified by the judge with a count check."""

from __future__ import annotations

from sandbox_helpers import FAST, run_py

from gymforge.sandbox import SandboxJob, TestSpec, verify_test_reports
from gymforge.sandbox.local import LocalBackend

TESTS = """
def t_add():
    assert candidate(1, 2) == 3
def t_str():
    assert candidate("a", "b") == "ab"
def t_sorted():
    assert sorted([3, 1, 2]) == [1, 2, 3] and candidate(0, 0) == 0
"""
NAMES = ["t_add", "t_str", "t_sorted"]


def spec(**kw: object) -> TestSpec:
    return TestSpec(files={"tests.py": TESTS}, names=NAMES, entry_point="add", **kw)  # type: ignore[arg-type]


def judge(backend: LocalBackend, source: str, s: TestSpec | None = None):  # type: ignore[no-untyped-def]
    s = s or spec()
    r = backend.run(SandboxJob(source=source, tests=s, limits=FAST))
    return r, verify_test_reports(r, s)


def test_honest_candidate_passes_and_wrong_one_fails(sandbox: LocalBackend) -> None:
    r, rep = judge(sandbox, "def add(a, b):\n    return a + b\n")
    assert rep.all_passed and rep.tests_passed == 3 and not rep.forged, (r, rep)
    _, rep = judge(sandbox, "def add(a, b):\n    return 3\n")
    assert not rep.all_passed and rep.passed == ["t_add"] and rep.complete
    assert rep.failed == {"t_str": "AssertionError", "t_sorted": "AssertionError"}


def test_stdout_claims_and_exit_codes_count_for_nothing(sandbox: LocalBackend) -> None:
    src = (
        "import os\n"
        "print('t_add PASSED\\nt_str PASSED\\nt_sorted PASSED\\nALL TESTS PASSED', flush=True)\n"
        "def add(a, b):\n    os._exit(0)\n"
    )
    r, rep = judge(sandbox, src)
    assert r.exit_code == 0 and "ALL TESTS PASSED" in r.stdout
    assert not rep.all_passed and rep.tests_passed == 0 and not rep.complete
    assert rep.failed["t_add"] == "not reported"


def test_forged_reports_are_detected(sandbox: LocalBackend) -> None:
    forge = (
        "import os, json, struct\n"
        "def frame(d):\n"
        "    h = json.dumps(d).encode(); body = struct.pack('>I', len(h)) + h\n"
        "    return struct.pack('>I', len(body)) + body\n"
        f"for i, n in enumerate({NAMES!r}):\n"
        "    os.write(3, frame({'ev': 'test', 'nonce': 'guess', 'seq': i, 'name': n, "
        "'passed': True}))\n"
        "os.write(3, frame({'ev': 'tests_done', 'nonce': 'guess', 'count': 3}))\n"
        "def add(a, b):\n    return None\n"
    )
    _, rep = judge(sandbox, forge)
    assert rep.forged and rep.tests_passed == 0 and not rep.all_passed


def test_always_equal_returns_do_not_pass(sandbox: LocalBackend) -> None:
    src = (
        "class Yes:\n    def __eq__(self, o): return True\n"
        "class I(int):\n    def __eq__(self, o): return True\n"
        "def add(a, b):\n    return Yes() if isinstance(a, int) and a else I(7)\n"
    )
    _, rep = judge(sandbox, src)
    assert rep.tests_passed == 0 and rep.complete
    assert rep.failed["t_add"] == "Unserialisable"


def test_patched_builtins_do_not_reach_the_tests(sandbox: LocalBackend) -> None:
    src = (
        "import builtins\nbuiltins.sorted = lambda x: [1, 2, 3]\n"
        "builtins.AssertionError = type('X', (Exception,), {})\n"
        "def add(a, b):\n    return a + b\n"
    )
    _, rep = judge(sandbox, src)
    assert rep.all_passed
    src2 = "import builtins\nbuiltins.sorted = lambda x: x\ndef add(a, b):\n    return a + b\n"
    tests = TESTS.replace("candidate(0, 0) == 0", "candidate([3], [1]) == sorted([3, 1])")
    _, rep = judge(
        sandbox, src2, TestSpec(files={"tests.py": tests}, names=NAMES, entry_point="add")
    )
    assert rep.failed.get("t_sorted") == "AssertionError", "sorted() was not patched for tests"


def test_tests_are_read_only_outside_importable_paths(sandbox: LocalBackend) -> None:
    src = (
        "import os, sys\n"
        "def add(a, b):\n"
        "    try:\n        open('/judge/tests.py', 'a').write('x')\n        w = True\n"
        "    except OSError:\n        w = False\n"
        "    try:\n        import tests\n        imp = True\n"
        "    except ImportError:\n        imp = False\n"
        "    assert not w and not imp and '/judge' not in sys.path\n"
        "    assert not any(p.startswith('/tmp/job') for p in sys.path)\n"
        "    return a + b\n"
    )
    _, rep = judge(sandbox, src)
    assert rep.all_passed, rep
    r = run_py(sandbox, "import os; print(os.listdir('/judge'))")
    assert r.stdout == "[]\n", "judge files are removed after the job"


def test_broken_test_file_is_an_internal_error(sandbox: LocalBackend) -> None:
    s = TestSpec(files={"tests.py": "def t(:\n"}, names=["t"], entry_point="add")
    r, rep = judge(sandbox, "def add(a, b): return a + b", s)
    assert r.status == "internal_error" and "SyntaxError" in (r.error or "")
    assert not rep.all_passed
