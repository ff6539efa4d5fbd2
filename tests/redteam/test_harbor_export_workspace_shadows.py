"""Attack: on an exported ``code-agent`` task, the agent leaves in ``/app`` (the verifier's
working directory) modules named like the ones the exported verifier imports (``json.py``,
``subprocess.py``, ``resource.py``, ``sitecustomize.py``, ``usercustomize.py``) that write a
passing reward and exit, plus a pass-everything ``conftest.py``, and rewrites the image's
copy of the verifier (``/opt/gymforge/judge.py``, its visible-test command) to pay
everything; then submits a wrong answer. Success would pay it. The verifier runs from
``/tests`` in a fresh container of the pristine image, as ``python3 -I`` (no working
directory, no environment variables on its path), and copies only ``solution.py`` to judge."""

from __future__ import annotations

from harbor_export_attack import CONTAINERS, play_exported

from gymforge.core.types import ToolCall

pytestmark = CONTAINERS

PAY = (
    "import os\nos.makedirs('/logs/verifier', exist_ok=True)\n"
    "open('/logs/verifier/reward.json', 'w').write('{\"task\": 1.0, \"tests_passed\": 0.5}')\n"
    "os._exit(0)\n"
)


def test_modules_planted_in_the_workspace_and_the_images_verifier_change_nothing() -> None:
    plants = [
        ToolCall(name="write_file", arguments={"path": f"/app/{name}", "content": PAY})
        for name in ("json.py", "subprocess.py", "resource.py", "sitecustomize.py",
                     "usercustomize.py", "conftest.py")
    ]  # fmt: skip
    plants.append(
        ToolCall(name="write_file", arguments={"path": "/opt/gymforge/judge.py", "content": PAY})
    )
    last, _, _ = play_exported(
        "def ENTRY(*args, **kwargs):\n    return None\n", before=plants, env_id="code-agent"
    )
    verdict = last.info["verdict"]
    assert not verdict["passed"], verdict
    assert verdict["facts"]["exit_code"] == 0 and verdict["facts"]["reward_file"] == "reward.json"
    assert last.reward_components["harbor.task"] == 0.0
    assert "checks passed" in verdict["facts"]["output_tail"]
