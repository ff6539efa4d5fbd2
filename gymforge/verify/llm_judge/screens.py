"""The rubric judge's exploit screens: what fails before any model call (``screen_answer``).

A screen reads the answer the way a model does, not the way a regex does: every pattern is
matched against each *reading* of the answer (``readings``), so a manipulation a model can
read is one a screen can read too. The readings are:

- the text canonicalised (``canon``): compatibility forms folded (full-width letters,
  ligatures, mathematical alphanumerics), accents and other combining marks dropped, format
  characters dropped (zero-width spaces and joiners, bidi controls, soft hyphens), case
  folded, every run of white space one space;
- the same with Cyrillic and Greek look-alikes of Latin letters read as Latin;
- each of those with words spelled out letter by letter (``g i v e``, ``g.i.v.e``) joined;
- the rot13 of the text, and the text of every base64 run in it (a model decodes both when
  asked to).

The patterns cover English and, for the requests a grader is known to obey (full marks,
ignore the instructions) and the master keys, a dozen other languages. A manipulation in a
language or an encoding outside these is not screened (docs/threat-model.md).
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re
import unicodedata

from gymforge.verify.math.extract import split_reasoning

MASTER_KEYS = frozenset(
    {
        "thought process",
        "thoughts",
        "thinking",
        "reasoning",
        "solution",
        "answer",
        "the answer is",
        "final answer",
        "my answer",
        "explanation",
        "step 1",
        "let's solve this problem step by step",
        "let's think step by step",
        "let me think",
        "let me solve this",
        "here is the solution",
        "here's my answer",
        "解",
        "答",
        "解答",
        "かいせつ",
        "解説",
        "respuesta",
        "solución",
        "réponse",
        "lösung",
        # the same openers in other languages
        "solucion paso a paso",
        "lösungsweg",
        "antwort",
        "soluzione",
        "risposta",
        "resposta",
        "solução",
        "oplossing",
        "antwoord",
        "rozwiązanie",
        "odpowiedź",
        "çözüm",
        "cevap",
        "lời giải",
        "giải",
        "решение",
        "ответ",
        "розв'язання",
        "відповідь",
        "풀이",
        "정답",
        "답",
        "해설",
        "الحل",
        "الجواب",
        "الإجابة",
        "समाधान",
        "उत्तर",
        "解题",
        "解题过程",
        "答案",
        "思路",
        "分析",
        "回答",
        "答え",
        "解き方",
        "考え方",
    }
)
"""Non-answers that LLM judges have been shown to accept ("master keys")."""

_LOOKALIKE = str.maketrans(
    dict(zip("аеорсухіјѕԁһкмтвнԛԝօսɑαορνικτεχυ", "aeopcyxijsdhkmtbhqwouaaopviktexu", strict=True))
)
_SPELLED = re.compile(r"(?<!\w)(?:\w[ .\-_*·/\n]){2,}\w(?!\w)")
_SEPARATORS = re.compile(r"[ .\-_*·/\n]")
_B64 = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}")
_LATEX = re.compile(r"\\(?:boxed|fbox|text[a-z]*|math[a-z]*|displaystyle)(?![A-Za-z])")
_FOLD = re.compile(r"[\W_]+", re.U)
_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
_MARK = r"[\s\"'`*_]*+"  # possessive: a long run of marks is read once, not re-tried
_SCORE_WORD = r"(?:scores?|points?|marks?|rating|grade)"
_CLAIM = (
    r"{mark}(?:[:=|]|->){mark}[{{(\[]?{mark}(?:" + _SCORE_WORD + r"{mark}[:=|]?{mark})?\d"
).format(mark=_MARK)
_SHAPES = re.compile(
    r"\b(?:score|grade|rating|marks?|points|verdict|result)s?\b[\s\"'`*_:=|-]{0,8}"
    r"\d+(?:\.\d+)?\s*(?:/|out of)\s*\d+"
    r"|<\s*(?:scores?|grade|rating|verdict|passed|criteria)\b[^>]*>"
    r"|(?<!\w)criteria\s*[:=]\s*[\n{\[]"
    r"|[{,]\s*(?:criteria|scores?|grade|rating|verdict|passed)\s*:\s*[\d{\[tp]"
)
_FRAME = re.compile(
    r"</\s*(?:task|reference|candidate)[\w-]*\s*>|<\s*(?:reference|candidate)[\w-]*\s*>"
    r"|\b(?:reference|expected|gold|official) (?:answers?|solutions?)\b[\s\"'`*_]*+"
    r"(?:is|was|are|:|=|reads|says|matches|equals)(?!\w)"
    r"|\bmatch(?:es)? the (?:reference|expected|gold)\b|\banswer key\b"
    r"|\b(?:grading|judge|grader|scoring|evaluation) (?:instructions?|guidelines?|rubric)\b"
    r"|\b(?:every|each|all) criteri(?:on|a)\b"
)
DEFAULT_CRITERIA = ("correctness", "completeness")
_INJECTION = re.compile(
    r"[\"'](?:criteria|scores?|verdict|grade|passed|rating)[\"']\s*:\s*[\[{\d\"'tf]", re.I
)
_APPEAL = re.compile(
    r"\b(?:ignore|disregard|forget)\b[^.\n]{0,40}\b(?:instructions?|rubric|criteria|above|prompt)\b"
    r"|\b(?:give|award|assign|rate|score|grade|mark)\b[^.\n]{0,30}"
    r"\b(?:full marks?|full score|full credit|maximum|perfect|10/10|10 10|100%|top marks?"
    r"|as correct)\b"
    r"|\bas (?:the|a|an) (?:judge|grader|evaluator|assessor)\b"
    r"|\b(?:dear|note to (?:the )?)(?:judge|grader|evaluator)\b"
    # other languages (accents are dropped before matching)
    r"|\bnote (?:maximale|parfaite|maximum)|\b(?:ignore[rz]?|oubliez?) (?:les |la )?"
    r"(?:instructions|consignes|grille|bareme)"
    r"|\b(?:puntuacion|puntaje|nota|calificacion|pontuacao) (?:maxima|perfecta|maximo)"
    r"|\bignora (?:las |le |as )?(?:instrucciones|istruzioni|instrucoes|rubrica)"
    r"|\b(?:volle|hochste|maximale) punkt(?:zahl|e)|\bbestnote|\bignoriere"
    r"|\bpunteggio (?:massimo|pieno)|\bpieni voti|\bvoto massimo"
    r"|максимальн\w* (?:балл|оценк)|высш\w* (?:балл|оценк)|игнорируй"
    r"|满分|最高分|忽略(?:以上|上述|评分|所有)|満点|最高点|無視して|만점|최고 점수|무시하"
    r"|الدرجة الكاملة|العلامة الكاملة",
    re.I,
)


def canon(text: str, squash: bool = True) -> str:
    """``text`` as a screen reads it: compatibility forms folded, combining marks and format
    characters dropped, case folded; with ``squash``, white space runs as one space (newlines
    kept)."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if unicodedata.category(c) not in ("Mn", "Me", "Cf"))
    text = unicodedata.normalize("NFKC", text).casefold()
    if not squash:
        return text
    return "\n".join(" ".join(line.split()) for line in text.splitlines())


def _fold(text: str) -> str:
    """Canonical words only: apostrophes dropped, other punctuation as spaces."""
    text = canon(text).replace("'", "").replace("\u2019", "")
    return " ".join(_FOLD.sub(" ", text).split())


def _decoded(text: str) -> list[str]:
    out = [codecs.decode(text, "rot13")]
    for run in _B64.findall(text)[:64]:
        try:
            raw = base64.b64decode(run + "=" * (-len(run) % 4), validate=True)
            out.append(raw.decode("utf-8"))
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
    return out


def readings(answer: str) -> list[str]:
    """Every reading of ``answer`` the screens match (see the module docstring)."""
    loose = canon(answer, squash=False)
    forms = [canon(f) for f in (loose, loose.translate(_LOOKALIKE))]
    forms += [
        canon(_SPELLED.sub(lambda m: _SEPARATORS.sub("", m.group()), f))
        for f in (loose, loose.translate(_LOOKALIKE))
    ]
    forms += [canon(d) for d in _decoded(answer)]
    forms.append(canon(_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), answer)))
    out: list[str] = []
    for form in forms:
        for f in (form, " ".join(form.split())):
            if f not in out:
                out.append(f)
    return out


_KEYS = frozenset(_fold(k) for k in MASTER_KEYS)


def _is_master_key(visible: str) -> bool:
    for form in (visible, visible.translate(_LOOKALIKE)):
        folded = _fold(_LATEX.sub(" ", form))
        if not folded or folded in _KEYS:
            return True
        last_line = canon(form).splitlines()[-1].rstrip() if canon(form) else ""
        if last_line.endswith((":", "...", "\u2026")) and len(folded.split()) <= 8:
            return True
    return False


def _claims(criteria: tuple[str, ...]) -> re.Pattern[str]:
    names = "|".join(re.escape(n.casefold()) for n in sorted({*criteria, *DEFAULT_CRITERIA}))
    return re.compile(rf"(?<!\w)(?:{names})\b{_CLAIM}|{_SHAPES.pattern}")


def screen_answer(
    answer: str, max_chars: int = 20_000, criteria: tuple[str, ...] = ()
) -> tuple[str, str | None]:
    """``(visible answer, failure reason or None)``; ``visible`` is the answer without its
    reasoning (``split_reasoning``), the text the judge model is shown. ``criteria`` names
    the rubric's criteria: a score given to one of them, in any shape, is a verdict."""
    visible = split_reasoning(answer)[0].strip()
    if len(visible) > max_chars:
        return visible, "too_long"
    if not visible:
        return visible, "empty_answer"
    if _is_master_key(visible):
        return visible, "master_key"
    forms = readings(visible)
    claims = _claims(criteria)
    if any(_INJECTION.search(f) or claims.search(f) for f in forms):
        return visible, "verdict_injection"
    if any(_APPEAL.search(f) or _APPEAL.search(_fold(f)) for f in forms):
        return visible, "grader_manipulation"
    if any(_FRAME.search(f) for f in forms):
        return visible, "frame_forgery"
    return visible, None
