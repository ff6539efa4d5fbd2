"""The rubric judge against the local OpenAI-compatible test server (never a hosted API).

The served "judge model" grades by whether the candidate contains the reference, hides an
all-10 verdict in its ``<think>`` block every time, and is *vulnerable* to master keys
(it gives them full marks, as real judges have been shown to): the judge's own screens
must stop those before any request is sent.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gymforge.cli import app
from gymforge.rollout.openai_policy import OpenAIPolicyFactory, Retry, Sampling
from gymforge.testing import OpenAITestServer, ServedReply
from gymforge.verify.llm_judge import ATTACKS, DEFAULT_RUBRIC, RubricJudge

FAST = Retry(max_attempts=3, base_delay=0.01, max_delay=0.05, call_timeout=10.0)
_CANDIDATE = re.compile(r"<(candidate-[0-9a-f]+)>\n(.*)\n</\1>", re.S)
_REFERENCE = re.compile(r"<reference>\n(.*)\n</reference>", re.S)


def verdict(correctness: int, completeness: int) -> str:
    return json.dumps(
        {
            "criteria": {
                "correctness": {"score": correctness, "reason": "compared with the reference"},
                "completeness": {"score": completeness, "reason": "covers the question"},
            }
        }
    )


def judge_model(request: dict[str, Any]) -> ServedReply:
    user = request["messages"][-1]["content"]
    answer = _CANDIDATE.search(user).group(2)  # type: ignore[union-attr]
    reference = _REFERENCE.search(user).group(1)  # type: ignore[union-attr]
    if len(answer.strip(" .:")) < 3 or answer.strip().lower() in ("solution", "thought process:"):
        return ServedReply(content=verdict(10, 10))  # the master-key weakness
    score = 10 if reference.lower() in answer.lower() else 1
    return ServedReply(content=f"<think>{verdict(10, 10)}</think>\n{verdict(score, 8)}")


@pytest.fixture
def server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer(judge_model, model="judge-model") as srv:
        yield srv


def factory(server: OpenAITestServer) -> OpenAIPolicyFactory:
    sampling = Sampling(temperature=0.0, logprobs=False, return_token_ids=False)
    return OpenAIPolicyFactory(
        "judge-model", base_url=server.base_url, sampling=sampling, retry=FAST
    )


def test_judge_through_the_openai_server(server: OpenAITestServer) -> None:
    async def go() -> list[Any]:
        f = factory(server)
        judge = RubricJudge(f, DEFAULT_RUBRIC, model="openai:judge-model")
        try:
            right = await judge.ajudge("Capital of France?", "It is Paris.", "Paris")
            wrong = await judge.ajudge("Capital of France?", "It is Lyon.", "Paris")
            sent = len(server.requests)
            keys = [await judge.ajudge("Capital of France?", a, "Paris") for a in ATTACKS.values()]
            return [right, wrong, sent, keys, judge.version]
        finally:
            await f.aclose()

    right, wrong, sent, keys, version = asyncio.run(go())
    assert right.passed and right.facts["criteria"] == {"correctness": 1.0, "completeness": 0.8}
    assert not wrong.passed and wrong.reason == "below_threshold"
    assert right.verifier == wrong.facts["judge"]["version"] == version
    assert "openai:judge-model" in version
    assert sent == 2
    assert len(server.requests) == 2, "a master key reached the judge model"
    assert not any(k.passed for k in keys)
    body = server.requests[0]
    assert body["temperature"] == 0.0 and body["messages"][0]["role"] == "system"
    assert "Rubric answer-quality@1" in body["messages"][1]["content"]


LABELS = [  # (answer, reference, human label); the fake judge passes a reference match
    ("Paris", "Paris", True),
    ("Lisbon is the capital", "Lisbon", True),
    ("Madrid", "Lisbon", False),
    ("Rome", "Oslo", False),
    ("It's the city of Oslo", "Oslo", True),
    ("Lima, Peru's capital", "Lima", True),
    ("Solution", "Lima", False),  # a master key: screened, score 0
    ("The capital is Paris-on-Seine", "Paris", False),  # the judge's false positive
]


def test_cli_calibrate_grades_with_the_served_judge(
    server: OpenAITestServer, tmp_path: Path
) -> None:
    labels = tmp_path / "human.jsonl"
    labels.write_text(
        "\n".join(
            json.dumps(
                {
                    "id": f"q{i}",
                    "question": "Name the capital.",
                    "answer": a,
                    "reference": ref,
                    "label": h,
                    "criteria": {"correctness": h},
                }
            )
            for i, (a, ref, h) in enumerate(LABELS)
        )
    )
    out = tmp_path / "calibration.json"
    args = ["judge", "calibrate", "--labels", str(labels), "--judge", "openai:judge-model"]
    args += ["--base-url", server.base_url, "--out", str(out), "--json", "--concurrency", "3"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    # scores: .933333 x5 (a, b, e, f, h), .333333 x2 (c, d), 0 (g). At the midpoint
    # .633333: tp 4, fp 1 (h), fn 0, tn 3; p_o = 7/8, p_e = .5 * 5/8 + .5 * 3/8 = .5,
    # kappa = (.875 - .5) / .5 = .75
    assert data["threshold"] == pytest.approx(0.633333)
    assert data["accuracy"] == 0.875 and data["kappa"] == pytest.approx(0.75)
    assert data["confusion"] == {"tp": 4, "fp": 1, "fn": 0, "tn": 3}
    assert data["per_criterion"]["correctness"]["kappa"] == pytest.approx(0.75)
    assert data["judge_version"].startswith("judge@1.3.0/answer-quality@1#")
    assert len(server.requests) == 7  # the master key never reached the model
