"""``verifiers:MODULE`` finds ``MODULE`` in the current directory through the ``gymforge``
console script, as ``docs/interop.md`` says.

The console script starts with its own ``bin`` directory as ``sys.path[0]``, not the current
directory (``python -m`` puts the current directory there), and Verifiers' loader imports the
module by itself, so ``verifiers:my_env`` beside the user was "Verifiers could not load it
(ModuleNotFoundError)" from the console script.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from interop_helpers import REPO, needs

pytestmark = needs("verifiers")

SCRIPT = Path(sys.executable).parent / "gymforge"

MY_ENV = """
from typing import Any


def load_environment(**kwargs: Any) -> Any:
    import verifiers.legacy as vf
    from datasets import Dataset

    rows = [{"question": f"What is {a} + 1?", "answer": str(a + 1)} for a in range(40)]
    parser = vf.Parser()

    def exact(completion: Any, answer: str, **_: Any) -> float:
        return 1.0 if (parser.parse_answer(completion) or "").strip() == answer else 0.0

    rubric = vf.Rubric(funcs=[exact], parser=parser)
    return vf.SingleTurnEnv(dataset=Dataset.from_list(rows), parser=parser, rubric=rubric)
"""


@pytest.fixture
def user_dir() -> Iterator[Path]:
    """A directory holding ``my_env.py``, readable by the sandbox's uids (the rubric's job
    binds the directory the module was found in)."""
    where = Path(tempfile.mkdtemp(prefix="gf-vf-cwd-"))
    where.chmod(0o755)
    (where / "my_env.py").write_text(MY_ENV, encoding="utf-8")
    (where / "my_env.py").chmod(0o644)
    try:
        yield where
    finally:
        shutil.rmtree(where, ignore_errors=True)


@pytest.mark.skipif(not SCRIPT.exists(), reason="no gymforge console script in this venv")
def test_console_script_finds_module_in_cwd(user_dir: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    proc = subprocess.run(
        [str(SCRIPT), "qa", "verifiers:my_env", "--check", "distribution_audit", "--json"],
        cwd=user_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "could not load it" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert report["env"] == "verifiers:my_env"
    # the oracle was found: the default parser's reply is the row's answer
    assert "scripted_baselines" not in report["not_applicable"]
