"""The real-engine target's parts: a tiny chat model built on the fly, and a vLLM server.

:func:`build_model` writes a Hugging Face model directory that vLLM can serve: a byte-level
BPE tokenizer trained in memory (:func:`gymforge.testing.tiny_chat.chat_tokenizer`, ChatML
style with tools and ``<tool_call>`` tokens, so vLLM's hermes tool parser loads) and a
randomly initialised ``LlamaForCausalLM`` (head_dim 32: vLLM's CPU attention needs >= 32),
then trained for a few hundred CPU steps on ``ledger`` oracle transcripts. The training
only makes the model emit tool-call-shaped text often enough that ledger episodes run for
several turns; the weights stay tiny and random-ish. ``generation_config.json`` caps new
tokens, or vLLM would fill the context every turn. Nothing is downloaded.

:class:`VLLMServer` runs ``python -m vllm.entrypoints.openai.api_server`` from the engine
venv on 127.0.0.1 (float32, small KV cache, hermes tool parser), waits for ``/health`` with a
bounded deadline and stops the whole process group. Needs torch and transformers.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import IO, Any

from gymforge.settings import inherited_environ
from gymforge.testing.tiny_chat import chat_tokenizer, ledger_transcripts

MAX_NEW_TOKENS = 48


def build_model(out: Path, *, episodes: int = 24, steps: int = 150, seed: int = 0) -> Path:
    """Build (or reuse, when ``out/config.json`` exists) the tiny ChatML model in ``out``."""
    if (out / "config.json").exists() and (out / "tokenizer.json").exists():
        return out
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    transcripts = ledger_transcripts(episodes, "chatml", seed)
    probe = chat_tokenizer("chatml", [json.dumps(t) for t in transcripts])
    texts = [probe.apply_chat_template(m, tools=t, tokenize=False) for m, t in transcripts]
    tokenizer = chat_tokenizer("chatml", texts)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=4096,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    _train(model, [tokenizer(t).input_ids for t in texts], steps)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    generation = {
        "eos_token_id": tokenizer.eos_token_id,
        "pad_token_id": tokenizer.pad_token_id,
        "max_new_tokens": MAX_NEW_TOKENS,
    }
    (out / "generation_config.json").write_text(json.dumps(generation, indent=2))
    return out


def _train(model: Any, sequences: list[list[int]], steps: int) -> None:
    """Next-token training on windows of the transcripts (CPU, seeded by the caller)."""
    import torch

    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    window = 256
    chunks = [s[i : i + window] for s in sequences for i in range(0, len(s) - 1, window // 2)]
    chunks = [c for c in chunks if len(c) > 8]
    model.train()
    for step in range(steps):
        batch = [chunks[(step * 8 + j) % len(chunks)] for j in range(8)]
        width = max(map(len, batch))
        ids = torch.tensor([c + [0] * (width - len(c)) for c in batch])
        labels = torch.tensor([c + [-100] * (width - len(c)) for c in batch])
        loss = model(input_ids=ids, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class VLLMServer:
    """A real vLLM OpenAI-compatible server for ``model`` run by ``python`` (the engine
    venv's interpreter). ``start`` waits at most ``timeout`` seconds for ``/health``."""

    def __init__(self, python: str | Path, model: Path, log: Path, port: int | None = None):
        self.python, self.model, self.log = str(python), model, log
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return self.root + "/v1"

    def command(self) -> list[str]:
        return [
            self.python,
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            str(self.model),
            "--served-model-name",
            "tiny",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--dtype",
            "float32",
            "--max-model-len",
            "4096",
            "--gpu-memory-utilization",
            "0.2",
            "--enable-auto-tool-choice",
            "--tool-call-parser",
            "hermes",
            "--seed",
            "0",
        ]

    def start(self, timeout: float = 420.0) -> VLLMServer:
        if self.proc is not None and self.proc.poll() is None:
            raise RuntimeError("this vLLM server is already running")
        env = inherited_environ(VLLM_CPU_KVCACHE_SPACE="1", VLLM_NO_USAGE_STATS="1")
        env["DO_NOT_TRACK"] = "1"
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self._log = self.log.open("wb")
        self.proc = subprocess.Popen(
            self.command(), stdout=self._log, stderr=subprocess.STDOUT, env=env,
            start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"vLLM exited with {self.proc.returncode}: {self.tail()}")
            try:
                with urllib.request.urlopen(self.root + "/health", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(1.0)
        self.stop()
        raise TimeoutError(f"vLLM did not become healthy within {timeout} s: {self.tail()}")

    def tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> VLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
