"""Attack: during its episode on an exported ``code-agent`` task, the agent looks for what
the original environment never shows it: the hidden tests (``/tests``, a ``spec.json``
anywhere), the reference solution (``/solution``, ``solve.sh``, the reference's text anywhere
in the image, a ``.git`` history in ``/app``). Success would let it copy the answer or the
expected values: the export easier than the original. The image is built from
``environment/`` alone, which holds only the starting workspace and the visible examples
(``test_what_the_agent_must_not_read_is_owner_only_and_not_in_the_image`` checks the files;
this checks the running container)."""

from __future__ import annotations

import json

from harbor_export_attack import CONTAINERS, code_task, play_exported

from gymforge.core.types import ToolCall

pytestmark = CONTAINERS

LOOK = (
    "ls -d /tests /solution /logs/verifier 2>&1; "
    "find / -xdev \\( -name spec.json -o -name solve.sh -o -name judge.py -o -name .git \\) "
    "-not -path '/proc/*' 2>/dev/null; "
    'grep -rlF -e "$NEEDLE" /app /opt /tmp /root /home /srv /usr/local /etc 2>/dev/null; '
    "echo END"
)


def test_the_agent_finds_neither_the_hidden_tests_nor_the_reference() -> None:
    truth = code_task("code-agent").truth
    needle = max(str(truth["reference"]).splitlines()[1:], key=len).strip()
    look = ToolCall(
        name="run", arguments={"command": f"NEEDLE={json.dumps(needle)}; {LOOK}", "timeout": 120}
    )
    last, _, shown = play_exported("", before=[look], env_id="code-agent")
    text = str(json.loads(shown[0])["result"]["output"])
    assert text.endswith("END\n"), text
    for path in ("/tests", "/solution"):
        assert f"cannot access '{path}': No such file" in text, text
    found = sorted(ln for ln in text.splitlines() if ln.startswith("/"))
    # the visible examples and the verifier's code (public); no hidden spec, no reference
    assert found == ["/opt/gymforge/judge.py", "/opt/gymforge/spec.json"], text
    assert not last.info["verdict"]["passed"]  # it wrote an empty solution
