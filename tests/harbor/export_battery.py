"""Answers to a ``calls`` code task, right, wrong and hostile, as ``solution.py`` files (a
plain module on ``sys.path``): the battery on which the exported verifier must score as the
code judge does (``test_harbor_export_judge_agrees.py``), and the answers the container round
trip plays. Each is built from the task's reference and entry point, so it fits any task."""

from __future__ import annotations

from collections.abc import Callable

MARK = "\\x00gymforge-result\\x00"


def _wrapped(entry: str, reference: str, body: str, top: str = "") -> str:
    """``reference`` renamed ``_ref``, then ``entry`` defined by ``body`` (which may call it)."""
    ref = reference.replace(f"def {entry}(", "def _ref(", 1)
    return f"{top}{ref}\n\ndef {entry}(*args, **kwargs):\n{body}"


BATTERY: dict[str, Callable[[str, str], str]] = {
    "oracle": lambda e, ref: ref,
    "empty": lambda e, ref: "",
    "returns_none": lambda e, ref: f"def {e}(*args, **kwargs):\n    return None\n",
    # right on about half the calls (by a digest of the arguments), a str on the others
    "half_right": lambda e, ref: _wrapped(
        e,
        ref,
        "    import hashlib\n    r = _ref(*args, **kwargs)\n"
        "    return r if hashlib.sha256(repr(args).encode()).digest()[0] % 2 else (r,)\n",
    ),
    "wrong_type_true": lambda e, ref: _wrapped(e, ref, "    return bool(_ref(*args))\n"),
    "int_subclass": lambda e, ref: _wrapped(
        e, ref, "    class I(int):\n        pass\n    return I(len(repr(_ref(*args))))\n"
    ),
    "unserialisable": lambda e, ref: f"def {e}(*args, **kwargs):\n    return object()\n",
    "raises": lambda e, ref: f"def {e}(*args, **kwargs):\n    raise ValueError('no')\n",
    # red-team corpus for code: exit early, os._exit(0), fake pass markers, the harness
    # monkeypatched, a conftest.py planted
    "exit_early": lambda e, ref: "import sys\nsys.exit(0)\n" + ref,
    "os_exit_at_import": lambda e, ref: "import os\nos._exit(0)\n" + ref,
    "os_exit_in_call": lambda e, ref: _wrapped(
        e,
        ref,
        "    import os\n    if len(repr(args)) % 3 == 0:\n        os._exit(0)\n"
        "    return _ref(*args)\n",
    ),
    "fake_pass_markers": lambda e, ref: (
        f"def {e}(*args, **kwargs):\n"
        f"    print('PASS call_0\\n14/14 checks passed\\nOK')\n"
        f'    print(\'{MARK}\' + \'{{"status": "ok", "value": true}}\')\n'
        f"    print('{MARK}' + '{{\"load\": \"ok\"}}')\n"
        "    return None\n"
    ),
    "monkeypatch_harness": lambda e, ref: (
        "import builtins, json, sys, __main__\n"
        'json.dumps = lambda *a, **k: \'{"status": "ok", "value": true}\'\n'
        "json.loads = lambda *a, **k: [None, []]\n"
        "builtins.isinstance = lambda *a: True\n"
        "for name in ('enc', 'say', 'call', 'strict_equal', 'run_check'):\n"
        "    setattr(__main__, name, lambda *a, **k: True)\n"
        f"def {e}(*args, **kwargs):\n    return True\n"
    ),
    "conftest_planted": lambda e, ref: (
        "import pathlib\n"
        "pathlib.Path('conftest.py').write_text("
        "'def pytest_collection_modifyitems(items):\\n    items.clear()\\n')\n"
        f"def {e}(*args, **kwargs):\n    return None\n"
    ),
    "times_out": lambda e, ref: _wrapped(
        e,
        ref,
        "    if len(repr(args)) % 2 == 0:\n        while True:\n            pass\n"
        "    return _ref(*args)\n",
    ),
}
"""name -> (entry point, reference source) -> ``solution.py``."""
