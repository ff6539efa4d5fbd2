"""An adapter for a framework that is not installed: one line naming the extra to install."""

from __future__ import annotations

import importlib.util

import pytest
from interop_helpers import gymforge_cli


@pytest.mark.parametrize(
    ("ref", "module"),
    [("verifiers:my_env", "verifiers"), ("openenv:http://127.0.0.1:8000", "openenv")],
)
def test_missing_framework_names_the_extra(ref: str, module: str) -> None:
    if importlib.util.find_spec(module) is not None:
        pytest.skip(f"{module} is installed here")
    proc = gymforge_cli("qa", ref)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines == [
        f"error: {ref} needs the optional extra 'interop' (pip install 'gymforge[interop]'): "
        f"No module named '{module}'"
    ], proc.stderr
