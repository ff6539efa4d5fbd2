"""Attack: spray transfers over every look-alike account and keep full partial credit.

The clerk's hard part is choosing the right customer (a distractor shares the name, in
another city) and the right account (checking or savings). This policy skips both: for each
requested transfer it sends the amount from every account of every customer with the
sender's name to every account of every customer with the receiver's name. The requested
transfer is always among them, so a score that counts only the requested transfers found
(and not the ones made besides) is 1.0 on a failed verdict: full credit under
``StandardReward(partial_credit=True)`` for not telling customers apart at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from gymforge.core import Reply, SyncEnvironment, ToolCall
from gymforge.core.verdict import Verdict
from gymforge.envs.ledger import LedgerEnv
from gymforge.reward.standard import StandardReward, StepCosts

_LINE = re.compile(r"^- \$(\d+)\.(\d\d) from (.+?) of \w+ \(\w+\) to (.+?) of \w+ \(\w+\)$", re.M)


def _call(env: SyncEnvironment, tool: str, **arguments: Any) -> Any:
    result = env.step(ToolCall(name=tool, arguments=arguments)).info["tool_result"]
    assert result["ok"], result
    return result["content"]


def _spray(env: SyncEnvironment, prompt: str) -> dict[str, Any]:
    """Every sender-named account to every receiver-named account, per requested line."""
    accounts: dict[str, list[str]] = {}
    for dollars, cents, src, dst in _LINE.findall(prompt):
        for name in (src, dst):
            if name not in accounts:
                found = _call(env, "search_customers", name=name)
                accounts[name] = [
                    a["account_id"]
                    for c in found
                    if c["name"] == name
                    for a in _call(env, "list_accounts", customer_id=c["customer_id"])
                ]
        for a in accounts[src]:
            for b in accounts[dst]:
                if a != b:
                    amount = int(dollars) * 100 + int(cents)
                    _call(env, "transfer", from_account=a, to_account=b, amount_cents=amount)
    verdict: dict[str, Any] = env.step(Reply(text="All transfers are done.")).info["verdict"]
    return verdict


def test_spraying_every_lookalike_account_earns_little_credit(
    make_sync: Callable[..., SyncEnvironment],
) -> None:
    env = make_sync()
    # difficulty 1 (one transfer, no faults): the spray fits in the step budget
    sprayed = 0
    for task_id in LedgerEnv.tasks.sample(6, 3, "train", difficulties=[1]):
        observation = env.reset(task_id, 0)
        verdict = _spray(env, str(observation.messages[-1].content))
        if verdict["facts"]["extra"] == 0:
            continue  # the only look-alike was the right account: nothing sprayed
        sprayed += 1
        assert verdict["passed"] is False
        assert verdict["facts"]["missing"] == 0  # the requested transfer is among them
        # the spray's credit is that of one right transfer among all it made
        made = verdict["facts"]["made"]
        assert verdict["score"] <= 1 / made
        paid = StandardReward(partial_credit=True, step_cost=0.0)(
            Verdict.model_validate(verdict), StepCosts()
        )
        assert paid["task"] <= 0.5
    assert sprayed >= 3
