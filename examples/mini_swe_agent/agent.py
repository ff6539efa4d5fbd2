"""mini-swe-agent as a gymforge workspace harness (``--harness-mode workspace``).

Run by ``gymforge`` as ``harness-cmd:.venv-mini-swe-agent/bin/python
examples/mini_swe_agent/agent.py`` (``scripts/mini_swe_agent_setup.sh`` builds that venv):
the published ``mini-swe-agent`` package, unmodified, its ``DefaultAgent`` with its own
configuration of its ``mini`` command (``mini.yaml``: tool calls), with two choices made for it:

- its **model** is litellm's ``openai/`` provider at ``OPENAI_BASE_URL`` (the episode's
  proxy URL, every request recorded with exact tokens) with ``OPENAI_API_KEY`` (the
  episode's token) and ``GYMFORGE_MODEL``; the cost map is litellm's local copy
  (``LITELLM_LOCAL_MODEL_COST_MAP``) and unknown costs are ignored, so nothing reaches the
  internet;
- its **environment** is :class:`GymforgeShell`, whose ``execute`` sends each command to
  the episode's workspace with ``gymforge-sh -c`` (each one a step of the environment's
  shell tool, run in its sandbox or container).

The task is ``GYMFORGE_INSTRUCTION_FILE``. When the agent submits, its submission (or, if
it stopped otherwise, its exit status) is printed: the episode's final message. Everything
else it prints goes to standard error.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before litellm is imported
os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
os.environ.setdefault("MSWEA_COST_TRACKING", "ignore_errors")
os.environ.setdefault(
    "MSWEA_GLOBAL_CONFIG_DIR", os.path.join(os.environ.get("HOME", "/tmp"), ".mswea")
)

COMMAND_TIMEOUT = 600  # the environment's shell tool enforces its own, shorter limit
SHELL = "gymforge-sh"


class GymforgeShell:
    """mini-swe-agent's environment protocol, each command run in the episode's workspace
    through ``gymforge-sh`` (output and exit code as the workspace gave them)."""

    def __init__(self) -> None:
        self.config: dict[str, Any] = {}

    def execute(
        self, action: dict[str, Any], cwd: str = "", *, timeout: int | None = None
    ) -> dict[str, Any]:
        command = str(action.get("command", ""))
        try:
            r = subprocess.run(
                [SHELL, "-c", command],
                text=True,
                errors="replace",
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                timeout=COMMAND_TIMEOUT,
            )
            output = {"output": r.stdout, "returncode": r.returncode, "exception_info": ""}
        except (OSError, subprocess.TimeoutExpired) as err:
            output = {
                "output": "",
                "returncode": -1,
                "exception_info": f"{type(err).__name__}: {err}",
            }
        self._check_finished(output)
        return output

    def _check_finished(self, output: dict[str, Any]) -> None:
        from minisweagent.exceptions import Submitted

        lines = output.get("output", "").lstrip().splitlines(keepends=True)
        if (
            lines
            and lines[0].strip() == "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
            and output["returncode"] == 0
        ):
            submission = "".join(lines[1:])
            raise Submitted(
                {
                    "role": "exit",
                    "content": submission,
                    "extra": {"exit_status": "Submitted", "submission": submission},
                }
            )

    def get_template_vars(self, **kwargs: Any) -> dict[str, Any]:
        import platform

        return platform.uname()._asdict() | kwargs

    def serialize(self) -> dict[str, Any]:
        return {"info": {"config": {"environment_type": f"{__name__}.GymforgeShell"}}}


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description="mini-swe-agent as a gymforge workspace harness")
    parser.add_argument("--step-limit", type=int, default=30, help="model calls at most")
    parser.add_argument("--max-tokens", type=int, default=None, help="per model call")
    args = parser.parse_args()

    import yaml
    from minisweagent import package_dir
    from minisweagent.agents.default import DefaultAgent
    from minisweagent.models.litellm_model import LitellmModel

    with open(os.environ["GYMFORGE_INSTRUCTION_FILE"]) as f:
        task = f.read()
    config = yaml.safe_load((package_dir / "config" / "mini.yaml").read_text())  # the `mini` CLI's
    agent_config = {
        k: v for k, v in config["agent"].items() if k != "mode"
    }  # mode: interactive only
    agent_config["step_limit"] = args.step_limit
    model_config = dict(config["model"])
    model_config["model_kwargs"] = (
        dict(model_config.get("model_kwargs") or {})
        | {
            "api_base": os.environ["OPENAI_BASE_URL"],
            "api_key": os.environ["OPENAI_API_KEY"],
            "temperature": 0.0,
        }
        | ({"max_tokens": args.max_tokens} if args.max_tokens else {})
    )
    model = LitellmModel(
        model_name=f"openai/{os.environ['GYMFORGE_MODEL']}",
        cost_tracking="ignore_errors",
        **model_config,
    )
    agent = DefaultAgent(model, GymforgeShell(), **agent_config)
    with contextlib.redirect_stdout(sys.stderr):
        result = agent.run(task)
    final = result.get("submission") or f"mini-swe-agent stopped: {result.get('exit_status')}"
    print(final.strip() or "submitted")


if __name__ == "__main__":
    main()
