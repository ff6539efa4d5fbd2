"""The answer payload of a reply: its last fenced block in the asked languages, else its
whole visible text (reasoning dropped), in linear time. Shared by the JSON-schema, SQL and
rubric judges; the rules are ``json_schema``'s contract, step 1."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gymforge.verify.math.extract import split_reasoning

MAX_REPLY_CHARS = 400_000
_FENCE = re.compile(r"[ \t]*```")
_TAG = re.compile(r"[\w+.-]*")
_WS = re.compile(r"\s+")


@dataclass(frozen=True)
class Extracted:
    """``text`` is the answer payload, or None with a ``reason``; ``fenced`` says where it
    came from."""

    text: str | None
    reason: str | None = None
    fenced: bool = False


def fence_tag(line: str) -> str | None:
    """The tag of a fence line (``""`` untagged), or None: blanks, three backticks, a tag between
    optional blanks; linear, where one expression retried the blanks around an empty tag against
    each other (quadratic: ``test_extract_fence_line_blanks``)."""
    m = _FENCE.match(line)
    tag = None if m is None else line[m.end() :].strip(" \t")
    return tag if tag is not None and _TAG.fullmatch(tag) else None


def extract_block(reply: str, langs: frozenset[str] = frozenset({"json", ""})) -> Extracted:
    """The answer payload of ``reply``: its last fenced block in one of ``langs`` (lower
    case; ``""`` accepts untagged fences), else the whole visible text. Linear time."""
    if len(reply) > MAX_REPLY_CHARS:
        return Extracted(None, "too_long")
    visible, _ = split_reasoning(reply)
    lines = visible.split("\n")
    blocks: list[tuple[str, int]] = []  # (content, index of the closing line)
    open_at: int | None = None
    open_lang = ""
    for i, line in enumerate(lines):
        tag = fence_tag(line)
        if tag is None:
            continue
        if open_at is None:
            open_at, open_lang = i, tag.lower()
        elif not tag:
            if open_lang in langs:
                blocks.append(("\n".join(lines[open_at + 1 : i]), i))
            open_at = None
    if open_at is not None and (open_lang in langs or not blocks):
        return Extracted(None, "unclosed_block")
    if not blocks:
        text = visible.strip()
        if not text:
            return Extracted(None, "no_answer")
        return Extracted(text)
    content, closed = blocks[-1]
    if "\n".join(lines[closed + 1 :]).strip():
        return Extracted(None, "text_after_answer", fenced=True)
    if len({_WS.sub(" ", c.strip()) for c, _ in blocks}) > 1:
        return Extracted(None, "hedge", fenced=True)
    if not content.strip():
        return Extracted(None, "no_answer", fenced=True)
    return Extracted(content.strip(), fenced=True)
