"""``RubricJudge``: grade a free-text answer with a rubric, through any ``Policy``.

The judge model is any ``gymforge.core.policy.Policy``: an ``OpenAIPolicy`` against an
OpenAI-compatible server (``OpenAIPolicyFactory`` is a policy factory), or a scripted
in-process one (``ScriptedJudge``). ``RubricJudge.ajudge(question, answer, reference)``
returns a ``Verdict``:

1. **Screens, before any model call** (``screen_answer``). The known judge exploits fail
   here without asking the model, so a gullible judge cannot be fooled by them:
   - ``empty_answer``: nothing outside the answer's reasoning (the judge never sees the
     answer's ``<think>`` text, so a verdict planted there has no reader);
   - ``master_key``: a non-answer that LLM judges are known to rate as correct
     (punctuation only such as ``":"``; openers such as ``"Thought process:"``,
     ``"Solution"``, ``"Let's solve this problem step by step."``, ``"解"``; any short
     lead-in ending in a colon);
   - ``verdict_injection``: the answer carries something shaped like a judge verdict
     (``"score": 10``, ``"criteria": {...}``);
   - ``grader_manipulation``: the answer addresses the grader ("ignore the rubric", "give
     this full marks", "as the judge...");
   - ``frame_forgery``: the answer writes the prompt's section tags, states a reference
     answer or gives grading instructions;
   - ``too_long``: over ``max_answer_chars``.
   Every screen reads the answer as a model would (``screens.readings``: compatibility
   forms, invisible characters and look-alike letters folded, rot13 and base64 decoded),
   and a score given to a rubric criterion in any shape (YAML, a table), or to the answer
   itself in prose ("a 10/10 answer", "this deserves full marks"), is an injection.
2. **The model call**: ``samples`` completions (sampling seeds ``0..samples-1``), each
   parsed by ``parse_scores`` (reasoning ignored, every criterion required); a judge reply
   that cannot be parsed fails closed (``judge_empty``, ``judge_unparseable``,
   ``judge_hedged``). Per-criterion scores are averaged over the samples.
3. **The decision**: ``score`` = weighted mean of normalised criterion scores; ``passed``
   iff ``score >= threshold``. The threshold comes from the attached ``Calibration`` when
   there is one, else ``threshold``.

Every verdict, screened or judged, carries ``facts["judge"]``: the judge ``version``
(judge code, rubric id and digest, model name, prompt template) and the calibration
figures (``threshold``, ``n``, ``accuracy``, ``kappa``) or None when uncalibrated.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import Any

from gymforge.core.blame import (
    blame_failure,
    blame_text,
    repeated_fault,
    server_fault,
    text_fault,
)
from gymforge.core.errors import InfraError, UserError
from gymforge.core.policy import EpisodeContext, Policy, PolicyTurn
from gymforge.core.seeding import derive_seed
from gymforge.core.types import Observation, Reply
from gymforge.core.verdict import Verdict
from gymforge.verify.llm_judge.calibrate import Calibration, JudgeRecord, LabeledItem
from gymforge.verify.llm_judge.rubric import (
    PROMPT_VERSION,
    Rubric,
    parse_scores,
    render_prompt,
    weighted_score,
)
from gymforge.verify.llm_judge.screens import screen_answer

VERSION = "1.3.0"
PROBE_ANSWER = "(no answer)"
"""The answer in the rubric prompt a judge model is probed with, none of the agent's text."""


class ScriptedJudge:
    """An in-process judge model: ``respond(prompt_text) -> reply text``. For tests and for
    rule-based judges; ``gullible()`` rates everything at the top of every scale."""

    name = checkpoint = "scripted-judge"

    def __init__(self, respond: Callable[[str], str]) -> None:
        self.respond = respond

    async def start(self, ctx: EpisodeContext) -> None:
        return None

    async def act(self, observation: Observation) -> PolicyTurn:
        text = self.respond(observation.text())
        return PolicyTurn(Reply(text=text), capture_level="text", text=text)


def gullible(rubric: Rubric) -> Callable[[], ScriptedJudge]:
    """A factory of the worst possible judge: full marks for any answer at all."""
    verdict = {"criteria": {c.name: {"score": c.scale, "reason": "ok"} for c in rubric.criteria}}
    return lambda: ScriptedJudge(lambda _prompt: json.dumps(verdict))


class RubricJudge:
    """See the module docstring. ``policy_factory`` makes a fresh judge policy per call;
    ``model`` names the judge model in the version stamp."""

    def __init__(
        self,
        policy_factory: Callable[[], Policy],
        rubric: Rubric,
        *,
        model: str = "unnamed",
        threshold: float = 0.5,
        calibration: Calibration | None = None,
        samples: int = 1,
        max_answer_chars: int = 20_000,
        allow_version_mismatch: bool = False,
    ) -> None:
        if samples < 1 or not 0.0 <= threshold <= 1.0:
            raise ValueError("samples must be >= 1 and threshold in [0, 1]")
        self.policy_factory = policy_factory
        self.rubric = rubric
        self.model = model
        self.samples = samples
        self.max_answer_chars = max_answer_chars
        if (
            calibration is not None
            and calibration.judge_version != self.version
            and not allow_version_mismatch
        ):
            raise UserError(
                f"the calibration was measured for judge {calibration.judge_version!r}, "
                f"not {self.version!r}; recalibrate (gymforge judge calibrate)"
            )
        self.calibration = calibration
        self.threshold = calibration.threshold if calibration is not None else threshold

    @property
    def version(self) -> str:
        """Judge code, rubric, rubric digest, model and prompt template, in one string."""
        r = self.rubric
        return f"judge@{VERSION}/{r.id}#{r.digest()}/{self.model}/p{PROMPT_VERSION}"

    def stamp(self) -> dict[str, Any]:
        """What every verdict carries about the judge that produced it."""
        cal = self.calibration
        return {
            "version": self.version,
            "model": self.model,
            "rubric": self.rubric.id,
            "threshold": self.threshold,
            "calibration": None if cal is None else cal.figures(),
        }

    async def ajudge(self, question: str, answer: str, reference: str | None = None) -> Verdict:
        """Grade ``answer`` to ``question`` (see the module docstring)."""
        names = tuple(c.name for c in self.rubric.criteria)
        visible, problem = screen_answer(answer, self.max_answer_chars, names)
        if problem is not None:
            return self._verdict(False, 0.0, problem, {})
        messages = render_prompt(self.rubric, question, visible, reference)
        obs = Observation(messages=tuple(messages))
        totals = {c.name: 0.0 for c in self.rubric.criteria}
        reasons: dict[str, str] = {}
        key = f"judge/{derive_seed('judge', self.version, question, visible, reference):016x}"
        for i in range(self.samples):
            asked = await self._ask(obs, key, i, question, reference)
            if isinstance(asked, Verdict):
                return asked
            turn = asked
            text = turn.text if turn.text is not None else getattr(turn.action, "text", "")
            parsed = parse_scores(text or "", self.rubric)
            if parsed.error is not None:
                return self._verdict(False, 0.0, parsed.error, {"detail": parsed.detail})
            for name, value in parsed.scores.items():
                totals[name] += value / self.samples
            reasons = reasons or parsed.reasons
        score = weighted_score(self.rubric, totals)
        passed = score >= self.threshold - 1e-9
        facts = {
            "criteria": {c.name: round(totals[c.name] / c.scale, 6) for c in self.rubric.criteria},
            "judge_reasons": reasons,
            "samples": self.samples,
        }
        return self._verdict(passed, score, None if passed else "below_threshold", facts)

    async def _sample(self, obs: Observation, key: str, i: int) -> PolicyTurn:
        policy = self.policy_factory()
        await policy.start(EpisodeContext(key, 0, sampling_seed=i, rollout=i))
        return await policy.act(obs)

    async def _ask(
        self, obs: Observation, key: str, i: int, question: str, reference: str | None
    ) -> PolicyTurn | Verdict:
        """Sample ``i`` of the judge model on ``obs`` (the prompt holding the answer), or
        the failed verdict of an answer the model will not grade. A judge model that stalls
        on the prompt (every attempt past its call timeout), refuses it, or fails on it on
        two tries (the second failing in any of those ways) while it answers the same
        rubric prompt with none of the agent's text (``PROBE_ANSWER``) failed on the
        answer: ``judge_timed_out``, ``judge_refused``, ``judge_failed``
        (``gymforge.core.blame``). Raised instead, an ``InfraError`` out of
        the verifier had the episode retried (a fresh sample of the answer) or stopped the
        run: tests/redteam/test_rubric_judge_stalled_by_answer_red19.py. A probe that fails
        too leaves the failure as it was: the judge's server (retried) or its configuration
        (the run stops)."""
        try:
            return await self._sample(obs, key, i)
        except InfraError as err:
            failure = err
        probe_obs = Observation(
            messages=tuple(render_prompt(self.rubric, question, PROBE_ANSWER, reference))
        )

        async def probe() -> PolicyTurn:
            return await self._sample(probe_obs, f"{key}/probe", i)

        fault = text_fault(failure)
        if fault is None:
            if not server_fault(failure):
                raise failure
            await blame_failure(failure, probe)
            try:  # answered without the text: the prompt holding it, asked once more
                return await self._sample(obs, key, i)
            except InfraError as again:  # a stall or refusal now is the answer's too
                fault = repeated_fault(again)
                if fault is None:
                    raise
                failure = again
        else:
            await blame_text(failure, probe, lambda original: original)
        detail = f"{type(failure).__name__}: {str(failure)[:300]}"
        return self._verdict(False, 0.0, f"judge_{fault}", {"detail": detail})

    def _verdict(
        self, passed: bool, score: float, reason: str | None, extra: dict[str, Any]
    ) -> Verdict:
        facts = {"reason": reason, **extra, "judge": self.stamp()}
        return Verdict(
            passed=passed,
            score=round(min(1.0, max(0.0, score)), 6),
            reason=reason,
            facts=facts,
            verifier=self.version,
        )


async def score_items(
    judge: RubricJudge, items: Sequence[LabeledItem], concurrency: int = 8
) -> list[JudgeRecord]:
    """The judge's record on every labelled item (at most ``concurrency`` calls at once).
    A screened answer records score 0 on every criterion."""
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(item: LabeledItem) -> JudgeRecord:
        async with gate:
            v = await judge.ajudge(item.question, item.answer, item.reference)
        zero = {c.name: 0.0 for c in judge.rubric.criteria}
        return JudgeRecord(
            score=v.score or 0.0, criteria=v.facts.get("criteria") or zero, version=judge.version
        )

    return list(await asyncio.gather(*(one(i) for i in items)))
