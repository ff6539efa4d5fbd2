"""Programs the ``swe`` tools and judge send into the sandbox (the job's main file), and the
parsing of what comes back. None of them ever carries an expected value of a hidden test.

- ``TEST_RUNNER``: the visible test runner (``run_tests``): imports ``conftest.py`` files,
  then every ``tests/test_*.py``, runs its ``test_*`` functions in file order and prints one
  report line. The agent's code runs in this process, so the report is what the agent's code
  let it say: it is shown to the agent and never judged.
- ``COMMAND``: ``run_command``: executes ``argv`` (``python`` means the sandbox's Python).
- ``HIDDEN_COMMAND`` (with ``BOOT_FILES``): the post-submit hidden run: ``COMMAND`` with the
  repository kept off the front of ``sys.path`` in every Python it starts
  (``PYTHONSAFEPATH``: the current directory and a script's directory are not prepended;
  ``PYTHONPATH`` is only the judge's ``.gf-boot`` directory, whose ``sitecustomize`` appends
  the repository root after the standard library and site-packages), so the test runner and
  every standard-library module come from the interpreter, never from the repository
  (``PYTHONSAFEPATH`` needs Python 3.11; an older sandbox interpreter ignores it, and the
  built tree's shadow rule, ``build``, is then the guard).

Every job's main file is ``ENTRY``, the sandbox's reserved entry name for Python
(``gymforge.sandbox.intake.entry_file``), which no workspace file can have, so a repository's
own ``main.py`` is never replaced.
- ``CALL_DISPATCH``: the hidden checks' candidate module: ``gf_check(target, args, kwargs)``
  imports ``package.module`` from the workspace and returns ``function(*args, **kwargs)``
  (``@absent:package.module:name`` returns whether ``name`` is gone). The return value
  crosses back as plain data and is compared in the judge.
"""

from __future__ import annotations

import json
from typing import Any

from gymforge.sandbox.intake import entry_file

REPORT_MARK = "\x1egymforge-test-report "
ENTRY = entry_file("python")
BOOT_DIR = ".gf-boot"

TEST_RUNNER = r"""
import sys, os, json, importlib.util, traceback
sys.dont_write_bytecode = True
root = os.getcwd()
if root not in sys.path:
    sys.path.insert(0, root)
selection = sys.argv[1] if len(sys.argv) > 1 else ""
want_file, _, want_test = selection.partition("::")

def load(path, name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(root, path))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod

results, errors = [], []
for conf in ("conftest.py", "tests/conftest.py"):
    if os.path.isfile(conf):
        try:
            load(conf, "conftest_" + str(len(errors)) + conf.replace("/", "_")[:-3])
        except BaseException as e:
            errors.append({"file": conf, "error": type(e).__name__ + ": " + str(e)[:300]})
files = []
if os.path.isdir("tests"):
    for dirpath, dirs, names in os.walk("tests"):
        dirs.sort()
        files += [os.path.join(dirpath, n) for n in sorted(names)
                  if n.startswith("test_") and n.endswith(".py")]
for path in files:
    if want_file and path != want_file and not path.startswith(want_file.rstrip("/") + "/"):
        continue
    try:
        mod = load(path, "test_" + path.replace("/", "_")[:-3])
    except BaseException as e:
        errors.append({"file": path, "error": type(e).__name__ + ": " + str(e)[:300]})
        continue
    for name, fn in list(vars(mod).items()):
        if not name.startswith("test_") or not callable(fn):
            continue
        if want_test and name != want_test:
            continue
        entry = {"id": path + "::" + name}
        try:
            fn()
            entry["outcome"] = "passed"
        except AssertionError as e:
            entry["outcome"] = "failed"
            tb = traceback.extract_tb(e.__traceback__)
            line = tb[-1].line if tb else ""
            entry["message"] = ("assert " + line.removeprefix("assert ") if line else "") + (
                (" -- " + str(e)[:200]) if str(e) else "")
        except BaseException as e:
            entry["outcome"] = "error"
            entry["message"] = type(e).__name__ + ": " + str(e)[:300]
        results.append(entry)
sys.stdout.flush()
print("\x1egymforge-test-report " + json.dumps({"tests": results, "errors": errors}))
"""

COMMAND = r"""
import os, sys, shutil
sys.dont_write_bytecode = True
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
argv = sys.argv[1:]
if argv[0] in ("python", "python3"):
    argv[0] = sys.executable
exe = argv[0] if "/" in argv[0] else shutil.which(argv[0])
if not exe or not os.path.exists(exe):
    print(argv[0] + ": command not found", file=sys.stderr)
    sys.exit(127)
os.execv(exe, argv)
"""

HIDDEN_COMMAND = r"""
import os, sys
sys.dont_write_bytecode = True
root = os.getcwd()
for k in ("PYTHONHOME", "PYTHONSTARTUP", "PYTHONINSPECT", "PYTHONEXECUTABLE", "PYTHONUSERBASE"):
    os.environ.pop(k, None)
os.environ.update(
    PYTHONSAFEPATH="1",
    PYTHONNOUSERSITE="1",
    PYTHONDONTWRITEBYTECODE="1",
    PYTHONPATH=os.path.join(root, ".gf-boot"),
)
argv = sys.argv[1:]
if argv[0] in ("python", "python3"):
    argv[0] = sys.executable
exe = argv[0] if "/" in argv[0] else None
if exe is None:
    for d in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep):
        if d and os.path.isfile(os.path.join(d, argv[0])):
            exe = os.path.join(d, argv[0])
            break
if not exe or not os.path.exists(exe):
    print(argv[0] + ": command not found", file=sys.stderr)
    sys.exit(127)
os.execv(exe, argv)
"""
BOOT_FILES = {
    BOOT_DIR + "/sitecustomize.py": (
        "import os, sys\n"
        "root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))\n"
        "if root not in sys.path:\n"
        "    sys.path.append(root)  # after the standard library and site-packages\n"
    )
}

CALL_DISPATCH = r"""
import importlib, os, sys
sys.dont_write_bytecode = True
sys.path.insert(0, os.getcwd())

def gf_check(target, args, kwargs):
    if target.startswith("@absent:"):
        module, name = target[len("@absent:"):].rsplit(":", 1)
        try:
            mod = importlib.import_module(module)
        except ImportError:
            return True
        return not hasattr(mod, name)
    module, name = target.rsplit(":", 1)
    fn = importlib.import_module(module)
    for part in name.split("."):
        fn = getattr(fn, part)
    return fn(*args, **kwargs)
"""
CALL_ENTRY = "gf_check"


def parse_report(stdout: str) -> tuple[dict[str, Any] | None, str]:
    """(the runner's report, the rest of stdout). None when no report line came."""
    head, mark, tail = stdout.rpartition(REPORT_MARK)
    if not mark:
        return None, stdout
    line, _, rest = tail.partition("\n")
    try:
        report = json.loads(line)
    except json.JSONDecodeError:
        return None, stdout
    return (report if isinstance(report, dict) else None), head + rest
