"""The verifier gymforge writes into an exported Harbor task (``tests/judge.py``).

It runs inside the task's container by ``tests/test.sh`` with only the standard library and
``tests/spec.json`` (written at export), and mirrors gymforge's own judge on plain data:

- **the tree judged is built, not inherited** (``swe``): the original repository (a copy in
  ``tests/original``) with the agent's changes to ``/app`` applied, except changes to
  protected paths, test directories, runner files (``conftest.py``, ``sitecustomize.py``,
  ``.pth``...) and modules that shadow the standard library, as ``swe``'s ``build`` drops them;
  a change to a protected path fails the task, and so does no applied change at all;
- **every check is one call in a child process** (``python3 -I``, in the built tree): the
  child prints what the call returned as tagged plain data, and this process compares it
  type-strictly with the expected value (floats within 1e-9, tuples are not lists, ``True``
  is not ``1``);
- the task passes when every check passes; ``reward.txt`` is 1 or 0, and the script exits 0
  either way (a crash of this script is the verifier's failure, not the agent's).
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

CALL_TIMEOUT = 10.0
MARK = "\x00gymforge-result\x00"
CHILD = r"""
import importlib, json, sys
sys.dont_write_bytecode = True
sys.path.insert(0, ".")
MARK = "\x00gymforge-result\x00"


def enc(v, depth=0):
    if depth > 50:
        return {"$repr": "too deep"}
    if v is None or type(v) in (bool, int, float, str):
        return v
    if type(v) is list:
        return [enc(x, depth + 1) for x in v]
    if type(v) is tuple:
        return {"$tuple": [enc(x, depth + 1) for x in v]}
    if type(v) is dict and all(type(k) is str for k in v):
        return {"$dict": {k: enc(x, depth + 1) for k, x in v.items()}}
    return {"$repr": type(v).__name__}


target, args, kwargs = json.loads(sys.stdin.read())
if target.startswith("@absent:"):
    module, name = target[len("@absent:"):].rsplit(":", 1)
    try:
        value = not hasattr(importlib.import_module(module), name)
    except ImportError:
        value = True
else:
    module, name = target.rsplit(":", 1)
    fn = importlib.import_module(module)
    for part in name.split("."):
        fn = getattr(fn, part)
    value = fn(*args, **kwargs)
sys.stdout.write(MARK + json.dumps(enc(value)) + "\n")
"""


def from_json(v: Any) -> Any:
    """An expected value as stored (``{"$tuple": [...]}`` marks a tuple)."""
    if isinstance(v, dict):
        if set(v) == {"$tuple"}:
            return tuple(from_json(x) for x in v["$tuple"])
        return {k: from_json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [from_json(x) for x in v]
    return v


def decode(v: Any) -> Any:
    """What the child returned, tagged plain data back to values (an unknown type never
    equals anything)."""
    if isinstance(v, dict):
        if set(v) == {"$tuple"}:
            return tuple(decode(x) for x in v["$tuple"])
        if set(v) == {"$dict"}:
            return {k: decode(x) for k, x in v["$dict"].items()}
        return object()
    if isinstance(v, list):
        return [decode(x) for x in v]
    return v


def strict_equal(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return bool(a == b or abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b)))
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(strict_equal(a[k], b[k]) for k in a)
    return bool(a == b)


def read_tree(root: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in filenames:
            p = Path(dirpath) / name
            if p.is_file() and not p.is_symlink():
                out[p.relative_to(root).as_posix()] = p.read_bytes()
    return out


def drop_reason(path: str, new: bool, spec: dict[str, Any], packages: set[str]) -> str | None:
    """Why a change to ``path`` never reaches the judged tree (``swe``'s rule)."""
    parts = path.split("/")
    name = parts[-1]
    if any(fnmatch.fnmatchcase(path, g) for g in spec["protected"]):
        return "protected"
    if set(spec["test_dirs"]) & set(parts[:-1]):
        return "test"
    if (
        new
        and name.endswith(".py")
        and (fnmatch.fnmatch(name, "test*.py") or name.endswith("_test.py"))
    ):
        return "test"
    if name in spec["runner_files"] or name.endswith(".pth"):
        return "runner"
    shadowed = set(spec["shadowed"])
    for depth in range(len(parts)):
        parent = "/".join(parts[:depth])
        if parent and parent in packages:
            break
        child = parts[depth]
        last = depth == len(parts) - 1
        module = child[:-3] if last and child.endswith(".py") else (None if last else child)
        if module in shadowed:
            return "shadow"
    return None


def build(
    spec: dict[str, Any], workspace: Path, original: Path
) -> tuple[dict[str, bytes], list[str], list[str]]:
    """(the judged tree, changes applied, protected paths changed)."""
    before, after = read_tree(original), read_tree(workspace)
    packages = {
        os.path.dirname(p) for p in (*before, *after) if os.path.basename(p) == "__init__.py"
    }
    tree, applied, protected = dict(before), [], []
    for path in sorted(before.keys() | after.keys()):
        if before.get(path) == after.get(path):
            continue
        why = drop_reason(path, path not in before, spec, packages)
        if why == "protected":
            protected.append(path)
        if why is not None:
            continue
        if path in after:
            tree[path] = after[path]
        else:
            del tree[path]
        applied.append(path)
    return tree, applied, protected


def run_check(root: Path, target: str, args: list[Any], kwargs: dict[str, Any]) -> tuple[bool, Any]:
    """(the call returned, its decoded value) from a child process in ``root``."""
    try:
        p = subprocess.run(
            [sys.executable, "-I", "-c", CHILD],
            input=json.dumps([target, args, kwargs]),
            capture_output=True,
            text=True,
            cwd=root,
            timeout=CALL_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return False, None
    _, mark, tail = p.stdout.rpartition(MARK)
    if p.returncode != 0 or not mark:
        return False, None
    try:
        return True, decode(json.loads(tail.splitlines()[0]))
    except (json.JSONDecodeError, IndexError):
        return False, None


def main() -> None:
    here = Path(__file__).resolve().parent
    spec = json.loads((here / "spec.json").read_text())
    workspace = Path(spec["workspace"])
    reasons: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if spec["kind"] == "swe":
            tree, applied, protected = build(spec, workspace, here / "original")
            if protected:
                reasons.append(f"protected files changed: {', '.join(protected)}")
            elif not applied:
                reasons.append("no change reached the judged tree")
        else:
            source = workspace / spec["solution"]
            tree = {spec["solution"]: source.read_bytes() if source.is_file() else b""}
        for rel, data in tree.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(data)
        passed = 0
        for check in spec["checks"]:
            ok, value = run_check(root, check["target"], check["args"], check["kwargs"])
            good = ok and strict_equal(value, from_json(check["expected"]))
            passed += good
            print(f"{'PASS' if good else 'FAIL'} {check['name']}")
        shutil.rmtree(root / "__pycache__", ignore_errors=True)
    total = len(spec["checks"])
    print(f"{passed}/{total} checks passed")
    if passed != total:
        reasons.append("hidden checks failed")
    for r in reasons:
        print(r)
    logs = Path("/logs/verifier")
    logs.mkdir(parents=True, exist_ok=True)
    (logs / "reward.txt").write_text("0\n" if reasons else "1\n")


if __name__ == "__main__":
    main()
