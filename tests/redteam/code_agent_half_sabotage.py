"""A scripted ``code-agent`` policy for ``test_code_agent_undecodable_name.py`` (loaded by the
CLI as ``path/code_agent_half_sabotage.py:policy``): the oracle on tasks ``add-0``,
``add-2``...; on the odd ones, one ``run_code`` that writes a file whose name is not valid
UTF-8, then a wrong answer."""

from __future__ import annotations

from gymforge.core.types import Reply, ToolCall
from gymforge.testing.half_oracle import HalfOracle

SABOTAGE = "open(b'\\xff\\xfe.txt', 'wb').write(b'x')\n"
WRONG = "```python\ndef add(a, b):\n    return a - b\n```"


def policy() -> HalfOracle:
    run = ToolCall(name="run_code", arguments={"code": SABOTAGE})
    return HalfOracle("half-sabotage", lambda n: [run, Reply(text=WRONG)])
