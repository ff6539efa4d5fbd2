"""Attack: a completion that is code, given to a Verifiers environment whose reward function
``eval``s the completion (``vf_eval_rubric.py``, as its author wrote it).

The completion writes a marker file holding the pid of the process that ran it. If the file
appears on the host with gymforge's own pid, model text ran in the grading process: it could
read the seal key, patch the verifier, or end the run. Success of the attack means the
marker names this process.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from interop_helpers import needs
from vf_attack import judge, use_test_uids

pytestmark = needs("verifiers")


def test_a_completion_that_is_code_does_not_run_in_the_grader(
    monkeypatch: Any, tmp_path: Path
) -> None:
    use_test_uids(monkeypatch)
    marker = tmp_path / "ran-here"
    os.chmod(tmp_path, 0o777)  # so a jailed scorer could write it too, if it could see it
    code = f"open({str(marker)!r}, 'w').write(str(__import__('os').getpid())) or 5"
    verdict = judge(code)
    ran_here = marker.exists() and marker.read_text() == str(os.getpid())
    assert not ran_here, "the completion ran in the gymforge process"
    assert verdict["passed"] is False or not marker.exists(), verdict
    # the honest answer still earns the rubric's reward: the rubric does run, elsewhere
    honest = judge("2 + 3")
    assert honest["passed"] is True and honest["facts"]["reward"] == 1.0, honest
