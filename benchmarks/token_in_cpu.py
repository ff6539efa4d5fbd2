"""Client CPU per turn: the token-in ``vllm:`` policy against the chat ``openai:`` policy.

Claim: ``vllm:MODEL`` costs at most 1.2x the client CPU per turn of ``openai:MODEL`` on the
same server, although it sends the prompt as token ids and asks ``/tokenize`` for every
turn's template delta (one extra small request per turn; the chat policy instead sends the
whole transcript as messages and decodes the server's prompt ids back). Both send their
requests on the same request path: ``--path auto`` (the default of both, here gymforge's
lean client), or ``--path fast`` (the SDK's generic ``client.post``).

Method: the local OpenAI-compatible test server (``gymforge.testing.openai_server``) runs in
its own process, so only the client's CPU is counted (``time.process_time``). Each round
plays C concurrent conversations of T turns through the policy's ``act``: a ledger-like
reset (system prompt, task, three tool schemas), then one tool result per turn; every
reply is ~200 tokens with logprobs and token ids. Rounds alternate between the two
policies (same server, same run), a warm-up round of each is discarded, and the reported
figure is the median over rounds of client CPU milliseconds per turn, with their ratio.

Run: python benchmarks/token_in_cpu.py [--rounds 6] [--conversations 32] [--turns 8]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from typing import Any

from openai_concurrency import RESET, start_server  # the same reset and test server

from gymforge.core.policy import EpisodeContext
from gymforge.core.types import Message, Observation
from gymforge.rollout.openai_policy import OpenAIPolicyFactory
from gymforge.rollout.server import Retry, Sampling
from gymforge.rollout.vllm_policy import VLLMPolicyFactory

TARGET = 1.2
RESULT = Observation(
    messages=(
        Message(
            role="tool",
            content='{"ok": true, "result": [{"customer_id": "C101", "city": "Lyon"}]}' * 3,
            tool_call_id="call_1",
            name="search_customers",
        ),
    )
)


async def round_cpu(factory: Any, conversations: int, turns: int, seed: int) -> float:
    """Client CPU seconds per turn for one round (C conversations of T turns)."""

    async def conversation(i: int) -> None:
        policy = factory()
        await policy.start(EpisodeContext(f"bench/v1/d1/s{i}", 0, sampling_seed=seed + i))
        await policy.act(RESET)
        for _ in range(turns - 1):
            await policy.act(RESULT)

    cpu0 = time.process_time()
    await asyncio.gather(*(conversation(i) for i in range(conversations)))
    return (time.process_time() - cpu0) / (conversations * turns)


async def measure(
    base_url: str, rounds: int, conversations: int, turns: int, path: Any = "auto"
) -> dict[str, Any]:
    options: dict[str, Any] = {
        "base_url": base_url,
        "sampling": Sampling(temperature=1.0, max_tokens=256),
        "retry": Retry(max_attempts=3, call_timeout=60.0),
        "request_path": path,  # the same for both: the claim is what token-in adds
    }
    factories = {
        "openai": OpenAIPolicyFactory("bench", **options),
        "vllm": VLLMPolicyFactory("bench", **options),
    }
    per_turn: dict[str, list[float]] = {name: [] for name in factories}
    try:
        for r in range(rounds + 1):  # round 0 warms both up and is discarded
            for name, factory in factories.items():
                cpu = await round_cpu(factory, conversations, turns, seed=r * 1000)
                if r:
                    per_turn[name].append(cpu)
    finally:
        for factory in factories.values():
            await factory.aclose()
    medians = {name: statistics.median(v) * 1e3 for name, v in per_turn.items()}
    return {
        "ms_per_turn": medians,
        "rounds_ms": {k: [round(x * 1e3, 3) for x in v] for k, v in per_turn.items()},
        "ratio": medians["vllm"] / medians["openai"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--conversations", type=int, default=32)
    ap.add_argument("--turns", type=int, default=8)
    ap.add_argument("--path", choices=("auto", "fast", "lean"), default="auto")
    args = ap.parse_args()
    proc, base_url = start_server(latency=0.0)  # the server answers at once: only client CPU
    try:
        result = asyncio.run(
            measure(base_url, args.rounds, args.conversations, args.turns, args.path)
        )
    finally:
        proc.kill()
        proc.wait(10)
    ms = result["ms_per_turn"]
    print(
        f"client CPU per turn ({args.path} path): "
        f"openai: {ms['openai']:.3f} ms, vllm: {ms['vllm']:.3f} ms"
    )
    print(f"per round (ms): {result['rounds_ms']}")
    verdict = "PASS" if result["ratio"] <= TARGET else "FAIL"
    print(f"ratio vllm/openai: {result['ratio']:.2f} (target <= {TARGET}): {verdict}")
    sys.exit(0 if verdict == "PASS" else 1)


if __name__ == "__main__":
    main()
