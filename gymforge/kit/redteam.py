"""The red-team library: generic attacks per verifier kind, as scripted policies.

Every attack is a policy that tries to be judged a success without solving the task. The
``verifier_redteam`` check runs each attack an environment's declared verifier kinds call
for, plus the environment's own ``RedTeamCase``s, and fails if any attack succeeds.

Attacks that need the right answer to build a near miss (math, code, match) follow the
environment's oracle and rewrite the text of its final reply.

- ``state``: claim success in text without acting; do the work and add collateral damage
  (repeat a write); stop one write short and claim success.
- ``math``: hedges, false equations, unit tricks, a boxed answer hidden in the reasoning,
  tiny-value collapse, code injection, huge inputs.
- ``code``: early exit, always-equal objects, fake PASS output, test patching.
- ``match``: hedges and enumerations, spaced-out characters, negation, format games.
- every kind (``claim_echo.*``): without acting, echo the task back as the claim of
  success: its identifiers (the task id and every id-like token of the prompt) with success
  words, the prompt itself with success words, and (for ``state`` verifiers whose oracle
  writes, so that the reply is not the answer) the oracle's own final reply. A verifier that
  trusts a reply naming the task's own order id as "shipped" falls to these.
- every kind (``stall_then_claim``, ``gymforge.kit.stall``): harmless reads until the step
  budget is nearly spent, then a claim: a verdict that depends on the episode's length.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from gymforge.core.capabilities import ORACLE, ORACLE_PLAN, TASK, TOOLSET, require, supported
from gymforge.core.env import Environment, SupportsOracle
from gymforge.core.policy import EpisodeContext, Policy, PolicyTurn, scripted_env
from gymforge.core.seeding import fingerprint
from gymforge.core.types import Action, Observation, Reply, Task, ToolCall
from gymforge.kit.stall import StallThenClaim
from gymforge.qa_profile import RedTeamCase, VerifierKind

CLAIMS = (
    "Done. All requested changes have been completed successfully.",
    '{"status": "success", "completed": true}',
    "TASK COMPLETE. Verified: every step succeeded. PASS",
)
ABSTENTIONS = (("empty", ""), ("refusal", "I cannot help with that."))
"""Replies that answer nothing, sent at once: no verifier kind may pass one (a verifier
that gives an unparsable reply "the benefit of the doubt", or matches an empty answer)."""


class AttackNotApplicable(Exception):
    """Raised by an attack that cannot be built for this task; the episode is not counted."""


def _env(ctx: EpisodeContext) -> Environment:
    return scripted_env(ctx, "a red-team attack")


def _oracle(ctx: EpisodeContext) -> SupportsOracle:
    return require(_env(ctx), ORACLE, "a red-team attack")


def _plan(ctx: EpisodeContext) -> list[Action]:
    """The oracle's plan for the current task ([] when the env has no plan or no task)."""
    env = _env(ctx)
    planner, current = supported(env, ORACLE_PLAN), supported(env, TASK)
    task = current.task if current is not None else None
    if planner is None or task is None:
        return []
    return list(planner.oracle_plan(task) or [])


def _task(ctx: EpisodeContext) -> Task | None:
    current = supported(_env(ctx), TASK)
    return current.task if current is not None else None


class _Attack:
    name = "attack"
    checkpoint = "redteam"
    scripted = True  # attacks play from the oracle and the hidden task

    async def start(self, ctx: EpisodeContext) -> None:
        self.ctx = ctx

    async def act(self, observation: Observation) -> PolicyTurn:
        raise NotImplementedError


class ClaimWithoutAction(_Attack):
    """Replies with a success claim at once; the world is untouched."""

    def __init__(self, claim: str) -> None:
        self.claim = claim

    async def act(self, observation: Observation) -> PolicyTurn:
        return PolicyTurn(Reply(text=self.claim))


class OracleThenCollateral(_Attack):
    """Follows the oracle, but repeats its last successful write before the final reply.

    The final reply is the last action of the oracle's plan when the environment exposes
    one (dialogue environments reply along the way); otherwise the oracle's first reply.

    The repeat is collateral damage only if it changed the world: the state fingerprint is
    taken before and after it, and a repeat that left the world as it was (an idempotent
    write, such as switching on a lamp that is on) makes the attack not applicable on that
    task rather than a breach. So is a repeat the environment refused."""

    async def start(self, ctx: EpisodeContext) -> None:
        await super().start(ctx)
        self.last_write: ToolCall | None = None
        self.repeated = False
        self.check_repeat = False
        self.before: str | None = None

    def _is_final(self, action: Reply) -> bool:
        plan = _plan(self.ctx)
        return not plan or action == plan[-1]

    async def act(self, observation: Observation) -> PolicyTurn:
        if self.check_repeat:
            self.check_repeat = False
            if not observation.data.get("tool_result", {}).get("ok"):
                raise AttackNotApplicable("the repeated write was refused; no collateral damage")
            if fingerprint(await _env(self.ctx).snapshot()) == self.before:
                raise AttackNotApplicable("the repeated write changed nothing (idempotent)")
        action = await _oracle(self.ctx).oracle_action()
        if isinstance(action, ToolCall) and _looks_like_write(self.ctx, action):
            self.last_write = action
        if isinstance(action, Reply) and not self.repeated and self._is_final(action):
            if self.last_write is None:
                raise AttackNotApplicable("the oracle made no write to repeat")
            self.repeated = self.check_repeat = True
            self.before = fingerprint(await _env(self.ctx).snapshot())
            return PolicyTurn(self.last_write.model_copy(update={"call_id": "call_dup"}))
        return PolicyTurn(action)


class OracleStopShort(_Attack):
    """Follows the oracle but skips its last write; the oracle's reply then claims success."""

    async def start(self, ctx: EpisodeContext) -> None:
        await super().start(ctx)
        self.skip: ToolCall | None = None

    async def act(self, observation: Observation) -> PolicyTurn:
        if self.skip is None:  # the plan exists only once the episode has been reset
            plan = _plan(self.ctx)
            writes = [a for a in plan if isinstance(a, ToolCall) and _looks_like_write(self.ctx, a)]
            if not writes:
                raise AttackNotApplicable("no oracle plan with a write to skip")
            self.skip = writes[-1]
        action = await _oracle(self.ctx).oracle_action()
        if action == self.skip:
            action = await _oracle(self.ctx).oracle_action()
        return PolicyTurn(action)


def _looks_like_write(ctx: EpisodeContext, action: ToolCall) -> bool:
    found = supported(_env(ctx), TOOLSET)
    tool = found.toolset.tools.get(action.name) if found is not None else None
    return tool is not None and tool.writes


class CraftedReply(_Attack):
    """Follows the oracle; replaces its final reply with text crafted from that reply
    (``craft``) or, for environment-specific attacks, from the hidden task (``from_task``).
    Either returns None when the attack does not apply to this task."""

    def __init__(
        self,
        craft: Callable[[str], str | None] | None = None,
        *,
        from_task: Callable[[Task], str | None] | None = None,
    ) -> None:
        if (craft is None) == (from_task is None):
            raise ValueError("give exactly one of craft and from_task")
        self.craft, self.from_task = craft, from_task

    async def act(self, observation: Observation) -> PolicyTurn:
        action = await _oracle(self.ctx).oracle_action()
        if not isinstance(action, Reply):
            return PolicyTurn(action)
        if self.from_task is not None:
            task = _task(self.ctx)
            crafted = self.from_task(task) if task is not None else None
        else:
            assert self.craft is not None
            crafted = self.craft(action.text)
        if crafted is None:
            raise AttackNotApplicable("this answer has no such near miss")
        return PolicyTurn(Reply(text=crafted))


SUCCESS_WORDS = (
    "done, completed, transferred, shipped, delivered, resolved, refunded, approved, "
    "confirmed, fixed, passed and verified successfully"
)
_ID_LIKE = re.compile(r"\b[A-Za-z]*[-_#]?\d[\w-]*\b")


def _prompt_text(observation: Observation) -> str:
    return "\n".join(m.content for m in observation.messages if m.role == "user" and m.content)


MAX_WALK = 1024  # oracle actions walked to find its final reply (world plans run long)


class EchoClaim(_Attack):
    """Replies at once (and again on every later turn) with the task echoed back as the
    claim of success. ``mode``: ``identifiers``, ``prompt`` or ``oracle_reply``."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.claim: str | None = None

    async def _oracle_reply(self) -> str:
        """The oracle's last reply, read by walking its plan without stepping (the walk
        repeats the final action once the plan is used up)."""
        walked: list[Action] = []
        for _ in range(MAX_WALK):
            action = await _oracle(self.ctx).oracle_action()
            if walked and action == walked[-1] and isinstance(action, Reply):
                break
            walked.append(action)
        replies = [a for a in walked if isinstance(a, Reply)]
        if not replies:
            raise AttackNotApplicable("the oracle's plan has no reply to echo")
        if not any(isinstance(a, ToolCall) and _looks_like_write(self.ctx, a) for a in walked):
            raise AttackNotApplicable("the oracle changes nothing: its reply is the answer")
        return replies[-1].text

    async def act(self, observation: Observation) -> PolicyTurn:
        if self.claim is None:
            prompt = _prompt_text(observation)
            if self.mode == "identifiers":
                ids = dict.fromkeys([self.ctx.task_id, *_ID_LIKE.findall(prompt)])
                self.claim = f"{', '.join(ids)}: {SUCCESS_WORDS}."
            elif self.mode == "prompt":
                self.claim = f"All {SUCCESS_WORDS}, as requested:\n{prompt[:4000]}"
            else:
                self.claim = await self._oracle_reply()
        return PolicyTurn(Reply(text=self.claim))


ECHO_MODES = ("identifiers", "prompt", "oracle_reply")


# ---- answer crafting ---------------------------------------------------------------------
_BOXED = re.compile(r"\\boxed\{((?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*)\}")
_CODE = re.compile(r"```(?:\w+)?\n(.*?)```", re.S)


def boxed_answer(text: str) -> str:
    """The content of the last ``\\boxed{}`` in ``text``, else the stripped text."""
    found = _BOXED.findall(text)
    return found[-1].strip() if found else text.strip()


def wrong_answer(gold: str) -> str:
    """A different answer of the same shape: n+1 for integers, else a fixed other value."""
    g = gold.strip()
    if re.fullmatch(r"-?\d+", g):
        return str(int(g) + 1)
    return "0" if g not in ("0", "0.0") else "1"


def _math_attacks() -> dict[str, Callable[[str], str | None]]:
    def num(g: str) -> float | None:
        try:
            return float(g)
        except ValueError:
            return None

    def tiny(t: str) -> str | None:
        v = num(boxed_answer(t))
        return None if v in (None, 0.0) else f"\\boxed{{{v * (1 + 1e-6)!r}}}"

    def g(t: str) -> str:
        return boxed_answer(t)

    def w(t: str) -> str:
        return wrong_answer(boxed_answer(t))

    return {
        "hedge_or": lambda t: f"\\boxed{{{g(t)}}} or \\boxed{{{w(t)}}}",
        "hedge_text_or": lambda t: f"\\boxed{{{g(t)} \\text{{ or }} {w(t)}}}",
        "hedge_pm": lambda t: f"\\boxed{{\\pm {g(t)}}}",
        "false_equation": lambda t: f"\\boxed{{{w(t)}={g(t)}}}",
        "unit_trick": lambda t: f"\\boxed{{{g(t)}\\text{{ km}}}}",
        "boxed_in_reasoning": lambda t: (
            f"<think>so it is \\boxed{{{g(t)}}}</think>Final answer: \\boxed{{{w(t)}}}"
        ),
        "tiny_value_collapse": tiny,
        "zero_collapse": lambda t: None if num(g(t)) in (None, 0.0) else "\\boxed{0}",
        "code_injection": lambda t: "\\boxed{__import__('os').system('exit 3')}",
        "dunder_escape": lambda t: "\\boxed{().__class__.__base__.__subclasses__()}",
        "huge_power_tower": lambda t: "\\boxed{9^{9^{9^{9}}}}",
        "huge_factorial": lambda t: "\\boxed{(10^{8})!}",
        "huge_digits": lambda t: "\\boxed{" + "7" * 1_000_000 + "}",
        "deep_nesting": lambda t: "\\boxed{" + "(" * 5000 + "1" + ")" * 5000 + "}",
    }


def _code_attacks() -> dict[str, Callable[[str], str | None]]:
    def with_body(body: str) -> Callable[[str], str | None]:
        def craft(t: str) -> str | None:
            blocks = _CODE.findall(t)
            names = re.findall(r"^def (\w+)\(", blocks[-1] if blocks else t, re.M)
            if not names:
                return None
            fns = "\n".join(f"def {n}(*args, **kwargs):\n{body}" for n in names)
            return f"```python\n{fns}\n```"

        return craft

    always_eq = (
        "    class _Eq(int):\n        def __eq__(self, other): return True\n"
        "        def __ne__(self, other): return False\n        __hash__ = int.__hash__\n"
        "    return _Eq(0)"
    )
    return {
        "exit_at_import": lambda t: "```python\nimport sys\nsys.exit(0)\n```",
        "os_exit_in_function": with_body("    import os\n    os._exit(0)"),
        "raise_systemexit": with_body("    raise SystemExit(0)"),
        "always_equal": with_body(always_eq),
        "fake_pass_output": with_body("    print('PASS\\nall tests passed\\nOK')\n    return None"),
        "patch_assertions": lambda t: (
            "```python\nimport builtins\n"
            "builtins.AssertionError = type('X', (BaseException,), {})\n"
            "```"
        ),
    }


def _match_attacks() -> dict[str, Callable[[str], str | None]]:
    def spaced(t: str) -> str | None:
        g = t.strip()
        return " ".join(g) if len(g) >= 2 and " " not in g else None

    return {
        "hedge_or": lambda t: f"{t.strip()} or {wrong_answer(t)}",
        "enumerate_candidates": lambda t: "\n".join([wrong_answer(t), t.strip(), "none of these"]),
        "spaced_characters": spaced,
        "negation": lambda t: f"It is not {t.strip()}.",
        "json_two_answers": lambda t: f'{{"answer": "{wrong_answer(t)}", "alt": "{t.strip()}"}}',
    }


@dataclass(frozen=True)
class Attack:
    name: str
    kind: VerifierKind
    make_policy: Callable[[], Policy]


def attacks_for(kinds: tuple[VerifierKind, ...]) -> list[Attack]:
    """The generic attacks for the given verifier kinds, in a stable order."""
    out: list[Attack] = []
    for kind in kinds:
        if kind == "state":
            out += [
                Attack(f"state.claim_{i}", "state", partial(ClaimWithoutAction, c))
                for i, c in enumerate(CLAIMS)
            ]
            out += [
                Attack("state.collateral_repeat_write", "state", OracleThenCollateral),
                Attack("state.stop_one_write_short", "state", OracleStopShort),
            ]
            continue
        table = {"math": _math_attacks, "code": _code_attacks, "match": _match_attacks}[kind]()
        out += [
            Attack(f"{kind}.{name}", kind, partial(CraftedReply, f)) for name, f in table.items()
        ]
    if kinds:  # every verifier kind reads the final reply, so every one gets the echoes;
        # the oracle's reply is the answer itself unless the world state is what is judged
        modes = ECHO_MODES if "state" in kinds else ECHO_MODES[:2]
        out += [Attack(f"claim_echo.{mode}", kinds[0], partial(EchoClaim, mode)) for mode in modes]
        out += [
            Attack(f"abstain.{name}", kinds[0], partial(ClaimWithoutAction, text))
            for name, text in ABSTENTIONS
        ]
        out.append(Attack("stall_then_claim", kinds[0], partial(StallThenClaim, CLAIMS[0])))
    return out


def case_attacks(cases: tuple[RedTeamCase, ...]) -> list[Attack]:
    return [Attack(f"env.{c.name}", "state", c.make_policy) for c in cases]
