"""Scripted baselines: ``oracle`` (reference path), ``random`` (seeded chaos), ``noop``.

These are the known-good, known-bad and do-nothing agents of the QA suite's baselines.
On a single-turn environment (no tools) ``random`` answers in the environment's own answer
format: it takes the shape of the oracle's reply (a boxed number, a fenced program, a JSON
record, an SQL query, ``Answer: ...``) and scrambles its content (``scramble``), so the
verifier's parsing paths are exercised by answers that look right and are wrong.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Callable
from typing import Any

from gymforge.core.env import SupportsOracle, has_oracle
from gymforge.core.errors import UserError
from gymforge.core.policy import EpisodeContext, Policy, PolicyTurn, scripted_env
from gymforge.core.seeding import derive_seed
from gymforge.core.types import Action, Invalid, Observation, Reply, ToolCall

WORDS = ["a", "Ana", "Smith", "C101", "A12345C", "0", "-1", "done", "ünï", "x" * 40]
JUNK_REPLIES = ["done", "I cannot help.", ""]
_NUMBER = re.compile(r"\d+")
_WORD = re.compile(r"[A-Za-z_][A-Za-z_]*")


def scramble(text: str, r: random.Random) -> str:
    """``text`` with its content randomised and its form kept: each run of digits becomes a
    random one of the same length (at least one of them changes), or, without digits, each
    word (at least one) becomes another word of the text, case-insensitively different
    (with no other word to swap in, one letter of a word becomes another letter of the same
    case; with no word at all, a random word is appended). Never returns ``text``, nor an
    answer that differs from it only in case or by an appended word (which lenient scorers
    still pay)."""
    digits = list(_NUMBER.finditer(text))
    if digits:
        forced = r.randrange(len(digits))
        parts, last = [], 0
        for i, m in enumerate(digits):
            old = m.group()
            new = old
            if i == forced or r.random() < 0.5:
                while new == old:
                    new = "".join(r.choice("0123456789") for _ in old)
                    if len(old) > 1 and new[0] == "0":
                        new = str(r.randint(1, 9)) + new[1:]
            parts += [text[last : m.start()], new]
            last = m.end()
        return "".join([*parts, text[last:]])
    # a word becomes another word of the same text, compared case-insensitively; upper-case
    # keywords (SELECT) are kept while the text has other words to change, so a query keeps
    # its form, but an all-capitals answer (a cipher's plaintext) is changed like any other;
    # markup tag names (<answer>) are form, not content
    words = [m for m in _WORD.finditer(text) if not text[: m.start()].endswith(("<", "</"))]
    words = words[1:] if len(words) > 1 else words
    plain = [m for m in words if not (m.group().isupper() and len(m.group()) > 1)]
    words = plain or words
    # each word changes with probability 1/2 (at least one does): a single changed word is
    # often a filler word ("is" for "a") that leaves a sentence answer right
    vocabulary = sorted({x.group() for x in words})
    options = [(m, [w for w in vocabulary if w.casefold() != m.group().casefold()]) for m in words]
    options = [(m, choices) for m, choices in options if choices]
    if options:
        forced = r.randrange(len(options))
        parts, last = [], 0
        for i, (m, choices) in enumerate(options):
            if i == forced or r.random() < 0.5:
                parts += [text[last : m.start()], r.choice(choices)]
                last = m.end()
        return "".join([*parts, text[last:]])
    if words:
        return _change_letter(text, words, r)
    return f"{text} {r.choice(WORDS[1:])}".strip() or r.choice(WORDS[1:])


def _change_letter(text: str, words: list[re.Match[str]], r: random.Random) -> str:
    """``text`` with one letter of one of ``words`` replaced by another letter of the same
    case (a word the text has no other word to swap with: ``EACADDDDB``, ``B → B → B``)."""
    spots = [m.start() + i for m in words for i, c in enumerate(m.group()) if c.isalpha()]
    if not spots:  # words of underscores only
        return f"{text} {r.choice(WORDS[1:])}"
    at = r.choice(spots)
    old = text[at]
    alphabet = string.ascii_uppercase if old.isupper() else string.ascii_lowercase
    new = r.choice([c for c in alphabet if c != old.upper() and c != old.lower()])
    return text[:at] + new + text[at + 1 :]


class OraclePolicy:
    """Follows the environment's reference solution (``SupportsOracle.oracle_action``)."""

    name = checkpoint = "oracle"
    scripted = True

    async def start(self, ctx: EpisodeContext) -> None:
        env = scripted_env(ctx, "the oracle policy")
        if not has_oracle(env):
            raise UserError(f"{env.spec.id} has no oracle (no oracle_action)")
        self._env: SupportsOracle = env

    async def act(self, observation: Observation) -> PolicyTurn:
        return PolicyTurn(await self._env.oracle_action())


class NoopPolicy:
    """Does nothing: replies with an empty message at once."""

    name = checkpoint = "noop"

    async def start(self, ctx: EpisodeContext) -> None:
        return None

    async def act(self, observation: Observation) -> PolicyTurn:
        return PolicyTurn(Reply(text=""))


class RandomPolicy:
    """Seeded by ``(task_id, seed)``. With tools: mixes valid-looking tool calls with invalid
    ones (unknown tools, wrong types, extra arguments), malformed output and replies. Without
    tools (single-turn): answers of the environment's form with random content (see the
    module docstring), and now and then an empty or evasive reply."""

    name = checkpoint = "random"
    scripted = True  # its single-turn answers take the form of the oracle's

    def __init__(self, reply_rate: float = 0.08, junk_rate: float = 0.15) -> None:
        self.reply_rate = reply_rate
        self.junk_rate = junk_rate

    async def start(self, ctx: EpisodeContext) -> None:
        self._r = random.Random(derive_seed("random-policy", ctx.task_id, ctx.seed, ctx.rollout))
        self._tools: list[dict[str, Any]] = []
        self._env = scripted_env(ctx, "the random policy")

    async def act(self, observation: Observation) -> PolicyTurn:
        if observation.tools:
            self._tools = [t["function"] for t in observation.tools]
        if not self._tools:
            return PolicyTurn(await self._answer())
        return PolicyTurn(self._choose())

    async def _answer(self) -> Action:
        """A single-turn reply: mostly a scrambled answer of the oracle's form, sometimes
        junk (an empty or evasive reply)."""
        r = self._r
        if r.random() >= self.junk_rate and has_oracle(self._env):
            reference = await self._env.oracle_action()
            if isinstance(reference, Reply):
                return Reply(text=scramble(reference.text, r))
        return Reply(text=r.choice(JUNK_REPLIES))

    def _choose(self) -> Action:
        r = self._r
        u = r.random()
        if u < self.reply_rate:
            return Reply(text=r.choice(JUNK_REPLIES))
        if u < 0.18:
            return Invalid(raw="<tool_call>{" + r.choice(WORDS), error="unterminated JSON")
        if u < 0.26:
            return ToolCall(name=r.choice(["delete_all", "", "x" * 300]), arguments={})
        fn = r.choice(self._tools)
        props: dict[str, Any] = fn["parameters"].get("properties", {})
        args = {name: self._value(spec.get("type")) for name, spec in props.items()}
        if u < 0.32:
            args[r.choice(["zzz", "__class__"])] = 1
        return ToolCall(name=fn["name"], arguments=args)

    def _value(self, kind: Any) -> Any:
        r = self._r
        if kind == "integer":
            return r.choice([0, 1, -5, 250, 10**12])
        if kind == "number":
            return r.choice([0.0, 1.5, -2.0])
        if kind == "boolean":
            return r.random() < 0.5
        if r.random() < 0.1:
            return r.randint(0, 9)  # wrong type on purpose
        return r.choice(WORDS)


SCRIPTED: dict[str, Callable[[], Policy]] = {
    "oracle": OraclePolicy,
    "random": RandomPolicy,
    "noop": NoopPolicy,
}


def scripted_policy(name: str) -> Callable[[], Policy]:
    """The factory of a scripted policy by name; UserError for an unknown one."""
    try:
        return SCRIPTED[name]
    except KeyError:
        raise UserError(
            f"unknown policy {name!r}; scripted policies: {', '.join(SCRIPTED)}"
        ) from None
