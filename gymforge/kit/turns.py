"""The parts of a ``ToolEnv`` step that need no environment: what an unparseable action
costs, how a verifier's verdict (or its crash) is recorded, and the text an action counts
against the token budget."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from gymforge.core.episode import EndReason, EpisodeCounters, MalformedPolicy
from gymforge.core.errors import InfraError
from gymforge.core.seeding import canonical_json
from gymforge.core.types import Action, Invalid, Message, Reply
from gymforge.core.verdict import Verdict
from gymforge.kit.hooks import MaybeAsync, settle
from gymforge.reward.standard import StepCosts

Outcome = tuple[list[Message], dict[str, Any], StepCosts, EndReason | None, Verdict | None]
"""What handling one action produced: messages, data, costs, end reason, verdict."""

PARSE_ERROR_HINT = (
    "Your last message could not be parsed as a tool call or reply ({error}). "
    "Call one of the tools with valid JSON arguments, or reply in plain text."
)


def action_text(action: Action) -> str:
    """The text of an action that counts against the token budget."""
    if isinstance(action, Reply):
        return action.text
    if isinstance(action, Invalid):
        return action.raw
    return action.name + canonical_json(action.arguments)


def on_invalid(
    c: EpisodeCounters, pol: MalformedPolicy, action: Invalid, info: dict[str, Any]
) -> Outcome:
    """An unparseable action: counted, hinted at, penalised or ending as ``pol`` says."""
    c.malformed += 1
    c.consecutive_malformed += 1
    info["malformed"] = action.error[:500]
    end: EndReason | None = None
    if pol.mode == "end":
        end = "malformed"
    elif c.consecutive_malformed >= pol.max_consecutive:
        end = "malformed_cap"
    hint = PARSE_ERROR_HINT.format(error=action.error[:300])
    costs = StepCosts(malformed_penalty=pol.penalty if pol.mode != "recover" else 0.0)
    return (
        [Message(role="user", content=hint)],
        {"parse_error": action.error[:300]},
        costs,
        end,
        None,
    )


async def judge(
    verify: Callable[[], MaybeAsync[Verdict]],
    verifier: str,
    info: dict[str, Any],
    timing: dict[str, float],
) -> Verdict:
    """Run ``verify`` and record its verdict in ``info`` (wall-clock facts in ``timing``).
    A crash of the verifier is a ``verifier_error`` verdict named ``verifier``, never the
    policy's failure; an ``InfraError`` (a dead sandbox) propagates, to be retried."""
    t0 = time.perf_counter()
    try:
        verdict = await settle(verify())
    except InfraError:  # its infrastructure failed (a dead sandbox): retried, never scored
        raise
    except Exception as err:  # the verifier's bug must not look like the policy's failure
        verdict = Verdict(
            passed=False,
            reason="verifier_error",
            # a verifier may attach bounded facts to its error (how a sandboxed
            # third-party scorer failed, its captured output)
            facts={
                "error": f"{type(err).__name__}: {str(err)[:200]}",
                **_error_facts(err),
            },
            verifier=verifier,
        )
        info["verifier_error"] = True
    timing["verify_ms"] = (time.perf_counter() - t0) * 1e3
    verdict, clock = verdict.split_timing()  # wall-clock facts must not reach info
    timing.update(clock)
    info["verdict"] = verdict_json(verdict)
    return verdict


_SCALARS = frozenset({str, int, bool, type(None)})
_PLAIN_VERDICT = tuple(Verdict.model_fields) == ("passed", "score", "reason", "facts", "verifier")
"""Whether ``Verdict`` has the fields :func:`verdict_json` writes (else pydantic dumps it)."""


def verdict_json(verdict: Verdict) -> dict[str, Any]:
    """``verdict.model_dump(mode="json")``. A ``Verdict`` itself (no extras, no private
    values) whose fields and facts are plain scalars (``str``, ``int``, ``bool``, None,
    finite ``float``) under ``str`` keys dumps as its field values with its facts copied,
    which is what pydantic gives; any other verdict goes through pydantic
    (``tests/kit/test_verdict_json.py``)."""
    fields = verdict.__dict__
    facts, score = fields["facts"], fields["score"]
    if (
        _PLAIN_VERDICT
        and type(verdict) is Verdict
        and verdict.__pydantic_extra__ is None
        and verdict.__pydantic_private__ is None
        and type(fields["passed"]) is bool
        and (score is None or (type(score) is float and math.isfinite(score)))
        and (fields["reason"] is None or type(fields["reason"]) is str)
        and type(fields["verifier"]) is str
        and type(facts) is dict
    ):
        for k, v in facts.items():
            kind = type(v)
            if type(k) is not str or not (kind in _SCALARS or (kind is float and math.isfinite(v))):
                break
        else:  # the fields in their declared order, as pydantic dumps them
            return {
                "passed": fields["passed"],
                "score": score,
                "reason": fields["reason"],
                "facts": dict(facts),
                "verifier": fields["verifier"],
            }
    return verdict.model_dump(mode="json")


def _error_facts(err: Exception) -> dict[str, Any]:
    """The ``facts`` dict a verifier's error carries (``ScorerError``), else nothing."""
    facts = getattr(err, "facts", None)
    if not isinstance(facts, dict):
        return {}
    return {str(k): v for k, v in facts.items() if k != "error"}
