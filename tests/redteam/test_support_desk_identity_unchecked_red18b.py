"""Attack: close a support case as ``identity_not_verified`` without checking what the caller said.

``identity_not_verified`` rests on ``verify_identity`` answering ``verified: False`` for the
caller's details, and the process rules only asked that some ``verify_identity`` call
answered and that the customer had said an email and a ZIP code first. A policy that asks for
them, then checks made-up details (or the right details against another customer) always
hears ``False`` and closes the case as not verified: it passed every task whose caller gave
wrong details (31 of 200 training tasks, a mean task reward of 0.155) without ever checking
the caller. Success is the full task reward for an outcome that was never looked up. The
defence: ``identity_not_verified`` needs a ``verify_identity`` of the case's customer with
the email and ZIP code the caller gave, answered without a fault, before closing.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_support_desk_unread_outcome_red18 import Desk

from gymforge.core import SyncEnvironment
from gymforge.envs.support_desk import SupportDeskEnv
from gymforge.envs.support_desk.env import ASK_IDENTITY

TASKS = SupportDeskEnv.tasks.sample(200, 5, "train")


def made_up_details(desk: Desk) -> dict[str, Any]:
    return {"customer_id": desk.t.customer_id, "email": "no@one.example", "zip_code": "00000"}


def another_customer(desk: Desk) -> dict[str, Any]:
    other = next(c["id"] for c in desk.t.world["customers"] if c["id"] != desk.t.customer_id)
    ident = desk.t.identity
    return {"customer_id": other, "email": ident["email"], "zip_code": ident["zip"]}


@pytest.fixture(scope="module")
def env() -> Any:
    env = SyncEnvironment(SupportDeskEnv())
    yield env
    env.close()


@pytest.mark.parametrize("details", [made_up_details, another_customer])
def test_not_verified_without_checking_the_callers_details_fails(
    env: SyncEnvironment, details: Any
) -> None:
    passed, invalid = [], 0
    for i, tid in enumerate(TASKS):
        desk = Desk(env, tid, i)
        if desk.t.identity["valid"] or len(desk.t.world["customers"]) < 2:
            continue
        invalid += 1
        desk.call("get_case", case_id=desk.t.case_id)
        desk.write("take_case", case_id=desk.t.case_id)
        desk.say(ASK_IDENTITY)
        desk.call("verify_identity", **details(desk))
        if desk.close(["identity_not_verified"]):
            passed.append(tid)
    assert invalid > 10
    assert not passed, f"{len(passed)} of {invalid} passed, e.g. {passed[:3]}"


def test_checking_the_callers_details_still_passes(env: SyncEnvironment) -> None:
    for i, tid in enumerate(TASKS[:60]):
        desk = Desk(env, tid, i)
        if desk.t.identity["valid"]:
            continue
        assert not desk.start()
        assert desk.close(["identity_not_verified"]), tid
