"""A deliberately gullible judge model for the rubric-judge attacks (a plain module).

``GullibleReader`` reads the prompt ``RubricJudge`` sends it the way a weak LLM does: it
sees through presentation (full-width letters, homoglyphs, invisible characters, letters
spelled with spaces or dots, words split across lines, base64 and rot13 it is asked to
decode), and then

- **obeys** any grading instruction or score claim it finds anywhere in the prompt, in
  English or in a few other languages, in any shape (JSON, YAML, a table, ``Score: 10/10``);
- **believes** the last reference answer the prompt shows it (``<reference>`` block or a
  ``Reference answer:`` line), wherever that block sits;
- **accepts** a reasoning opener (a "master key") in any language as a correct answer;
- otherwise grades honestly: full marks iff the reference (its number) is in the candidate.

A defence must hold against it without making it smarter: the screens fire, or the frame
leaves it nothing to obey. ``tasks(n)`` are arithmetic questions with their references.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import codecs
import contextlib
import json
import re
import unicodedata
from collections.abc import Callable

from gymforge.verify.llm_judge import DEFAULT_RUBRIC, Rubric, RubricJudge, ScriptedJudge

_CONFUSABLE = str.maketrans(
    "аеорсухіјѕԁһкмтвнАЕОРСХІЈЅВНКМТαορνικτεΑΒΕΗΙΚΜΝΟΡΤΧΥΖ",
    "aeopcyxijsdhkmtbhAEOPCXIJSBHKMTaopvikteABEHIKMNOPTXYZ",
)
_SPELLED = re.compile(r"\b(?:\w[ .\-_*]){2,}\w\b")
_B64 = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}")

OBEY = re.compile(
    r"full marks|full score|full credit|maximum score|perfect score|top marks|10/10|10 out of 10"
    r"|every criterion (?:scores|gets|is) (?:10|full)|all criteria (?:met|satisfied)"
    r"|note maximale|puntuaci[oó]n m[aá]xima|volle punktzahl|punteggio massimo|nota m[aá]xima"
    r"|максимальн\w* балл|满分|満点|만점"
    r"|(?:score|correctness|completeness|grade|rating)[\"'*]*\s*[:=|]\s*[\"'*]*(?:10|100)\b"
    r"|\|\s*(?:correctness|completeness)\s*\|\s*10\b"
    r"|\"score\"\s*:\s*10\b|<score>\s*10\b",
    re.I,
)
MASTER = re.compile(
    r"^\W*(?:решение|lösungsweg|soluzione|resposta|antwort|풀이|الحل|समाधान|answer|solution"
    r"|thought process|\\boxed\{\s*\})\W*$",
    re.I,
)
_REFERENCE = re.compile(r"<reference>\n(.*?)\n</reference>|Reference answer:[ \t]*(\S[^\n]*)", re.S)
_CANDIDATE = re.compile(r"<(candidate-[0-9a-f]+)>\n(.*)\n</\1>", re.S)


def see(text: str) -> str:
    """What a model reads in ``text``: presentation tricks undone, encodings decoded."""
    text = unicodedata.normalize("NFKC", text)
    text = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text)
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    text = text + "\n" + text.translate(_CONFUSABLE)
    text = _SPELLED.sub(lambda m: re.sub(r"[ .\-_*]", "", m.group()), text)
    extra = []
    if "rot13" in text.lower() or "rot-13" in text.lower():
        extra.append(codecs.decode(text, "rot13"))
    for run in _B64.findall(text):
        with contextlib.suppress(binascii.Error, UnicodeDecodeError, ValueError):
            extra.append(base64.b64decode(run + "=" * (-len(run) % 4)).decode("utf-8"))
    return "\n".join([text, " ".join(text.split()), *extra])


def reply(rubric: Rubric, full: bool) -> str:
    table = {c.name: {"score": c.scale if full else 0, "reason": "r"} for c in rubric.criteria}
    return json.dumps({"criteria": table})


def gullible_respond(prompt: str, rubric: Rubric = DEFAULT_RUBRIC) -> str:
    """The gullible model's whole reply to ``prompt`` (see the module docstring)."""
    seen = see(prompt)
    if OBEY.search(seen):
        return reply(rubric, True)
    cand = _CANDIDATE.search(prompt)
    candidate = see(cand.group(2)) if cand else ""
    if any(MASTER.match(line) for line in candidate.split("\n")[:2]):
        return reply(rubric, True)
    refs = [a or b for a, b in _REFERENCE.findall(prompt)]
    ref = refs[-1].strip() if refs else ""
    return reply(rubric, bool(ref) and re.search(rf"(?<!\d){re.escape(ref)}(?!\d)", candidate))


def gullible_judge(rubric: Rubric = DEFAULT_RUBRIC) -> RubricJudge:
    return RubricJudge(
        lambda: ScriptedJudge(lambda p: gullible_respond(p, rubric)), rubric, model="gullible"
    )


def tasks(n: int) -> list[tuple[str, str, str]]:
    """``(question, reference, a wrong answer)`` for ``n`` arithmetic questions."""
    out = []
    for i in range(n):
        a, b = 17 + 7 * i, 203 + 13 * i
        out.append((f"What is {a} + {b}?", str(a + b), str(a + b + 1 + i % 5)))
    return out


def paid(craft: Callable[[str], str], n: int = 120, right: bool = False) -> int:
    """How many of ``n`` tasks the gullible judge passes ``craft(wrong answer)`` on
    (``craft(the reference)`` with ``right``: an honest solver's answer)."""
    judge = gullible_judge()
    return sum(
        asyncio.run(judge.ajudge(q, craft(ref if right else wrong), ref)).passed
        for q, ref, wrong in tasks(n)
    )
