"""Template deltas on two real chat-template styles (ChatML/Qwen with tools, Llama 3), with
real ``transformers`` tokenizers trained in memory, and the tool-call formats they imply."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from gymforge.core.types import Invalid, Reply, ToolCall
from gymforge.rollout.chat_template import LocalTemplate, TemplateDelta, Toolset, close_rest
from gymforge.rollout.tool_formats import detect_format, parse_completion

pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from gymforge.testing.tiny_chat import chat_tokenizer, ledger_transcripts

STYLES = ("chatml", "llama3")


@pytest.fixture(scope="module")
def tokenizers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One tokenizer directory per style, trained on ledger transcripts."""
    out = {}
    for style in STYLES:
        texts = [str(t) for t in ledger_transcripts(6, style)]
        path = tmp_path_factory.mktemp(style)
        chat_tokenizer(style, texts, vocab_size=600).save_pretrained(path)
        out[style] = path
    return out


def token_in_sequence(
    delta: TemplateDelta, tok: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> list[int]:
    """What the vllm: policy would send for the conversation's final turn, with each
    assistant turn "generated" as its canonical tokens plus the EOS."""

    async def build() -> list[int]:
        i = next(k for k, m in enumerate(messages) if m["role"] == "assistant")
        ids = await delta.first_prompt(messages[:i], tools)
        close = await delta.close(tools)
        while i < len(messages):
            completion = tok.encode(messages[i]["content"], add_special_tokens=False)
            completion.append(tok.eos_token_id)
            j = next(
                (k for k in range(i + 1, len(messages)) if messages[k]["role"] == "assistant"),
                len(messages),
            )
            ids += completion + close_rest(completion, close)
            ids += await delta.delta(messages[i + 1 : j], tools)
            i = j
        return ids

    return asyncio.run(build())


@pytest.mark.parametrize("style", STYLES)
def test_token_in_sequence_spells_the_templates_rendering(
    tokenizers: dict[str, Path], style: str
) -> None:
    template = LocalTemplate(str(tokenizers[style]))
    tok = template.tokenizer
    delta = TemplateDelta(template)
    for messages, tools in ledger_transcripts(4, style, seed=7):
        assert any(m["role"] == "tool" for m in messages) and tools
        body = messages[:-1] if messages[-1]["role"] != "assistant" else messages
        # the prompt of the turn after the last tool result, built turn by turn
        ids = token_in_sequence(delta, tok, [*body[:-1]], tools)
        rendered = template.render(body[:-1], tools, True)
        assert tok.decode(ids, skip_special_tokens=False) == rendered
        if style == "chatml":  # special tokens bound every piece: even the ids agree
            assert ids == tok.encode(rendered, add_special_tokens=False)


@pytest.mark.parametrize(("style", "close"), [("chatml", "<|im_end|>\n"), ("llama3", "<|eot_id|>")])
def test_close_and_eos(tokenizers: dict[str, Path], style: str, close: str) -> None:
    template = LocalTemplate(str(tokenizers[style]))
    ids = asyncio.run(TemplateDelta(template).close(None))
    assert template.tokenizer.decode(ids, skip_special_tokens=False) == close
    eos = template.tokenizer.eos_token_id
    assert ids[0] == eos  # the model's EOS is the first token of the close
    assert close_rest([5, eos], ids) == ids[1:]  # after EOS: only the rest
    assert close_rest([5, 6], ids) == ids  # cut by length or a stop string: all of it


@pytest.mark.parametrize(("style", "fmt"), [("chatml", "hermes"), ("llama3", "llama3_json")])
def test_tool_format_is_detected_from_the_template(
    tokenizers: dict[str, Path], style: str, fmt: str
) -> None:
    template = LocalTemplate(str(tokenizers[style]))
    tools = ledger_transcripts(1, style)[0][1]
    assert detect_format(asyncio.run(TemplateDelta(template).probe_text(tools))) == fmt


def test_llama3_json_calls() -> None:
    call = parse_completion('{"name": "f", "parameters": {"x": 1}}', "llama3_json", "c1")
    assert isinstance(call, ToolCall) and call.arguments == {"x": 1} and call.call_id == "c1"
    tagged = parse_completion('<|python_tag|>{"name": "f", "arguments": {}}', "llama3_json", "c")
    assert isinstance(tagged, ToolCall) and tagged.name == "f"
    bad = parse_completion('{"name": "f", "parameters": {"x": ', "llama3_json", "c")
    assert isinstance(bad, Invalid) and "not valid JSON" in bad.error
    nan = parse_completion('{"name": "f", "parameters": [1]}', "llama3_json", "c")
    assert isinstance(nan, Invalid) and "arguments must be" in nan.error
    assert parse_completion("All done.", "llama3_json", "c") == Reply(text="All done.")
    assert parse_completion('{"total": 3}', "llama3_json", "c") == Reply(text='{"total": 3}')
    hermes = parse_completion('<tool_call>{"name": "f", "arguments": {}}</tool_call>', "none", "c")
    assert isinstance(hermes, Reply)


def test_a_tokenizer_without_a_chat_template_is_refused(tmp_path: Path) -> None:
    tok = chat_tokenizer("chatml", ["hello world"], vocab_size=300)
    tok.chat_template = None
    tok.save_pretrained(tmp_path)
    from gymforge.core.errors import UserError

    with pytest.raises(UserError, match="no chat template"):
        LocalTemplate(str(tmp_path))


def test_a_toolset_renders_what_its_key_says() -> None:
    """The template caches by the tools' JSON; a list changed after the Toolset was made
    must not render under the old key."""
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    made = Toolset(tools)
    tools[0]["function"]["name"] = "g"
    assert made.tools is not None and made.tools[0]["function"]["name"] == "f"
    assert json.loads(made.key) == made.tools
    assert Toolset.of(made) is made and Toolset(None).tools is None and Toolset([]).key == "null"
