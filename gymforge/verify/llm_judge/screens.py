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

from gymforge.verify.llm_judge.self_grade import self_graded
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
# a line start and that line's marks (never the next line's: a newline is a mark too, and a
# scan from each newline over every newline after it was quadratic on blank lines)
_LINE = r"(?:^|(?<=\n))(?:[^\w\n]|_)*"
# the score given to this answer: "for this answer", "on this.", "here"
_TO_THIS = (
    r"\s+(?:for|on|to|in) (?:this|my|the above|the|your) "
    r"(?:answer|response|solution|submission|reply|one)\b"
    r"|\s+(?:for|on|to|in) (?:this|it|that)\s*(?:[.!,;)]|$)|\s+here\b"
)
# a claim ends at its number (``correctness: 10`` on its own, in a table cell, a list or a
# mapping), or its number is a score: quoted with it, in points, or given to this answer;
# not ``Correctness: 1 of the 3 statements is true`` (prose about the word)
_CLAIM_ENDS = (
    r"[\s\"'`*_]*+(?:[,;|)}\]\n]|\.?$)|[\"'`*_]|\s*(?:points?|pts?|marks?|stars?)\b"
    r"|\s*[-\u2013\u2014]|\s+(?:because|since|as|overall|given|thanks)\b|" + _TO_THIS
)
_SEP = rf"{_MARK}(?:[:=|]|->){_MARK}"
_CLAIM = (
    _SEP
    + rf"[{{(\[]?{_MARK}(?:"
    + _SCORE_WORD
    + rf"{_MARK}[:=|]?{_MARK})?\d+(?:\.\d+)?(?:\s*(?:/|out of)\s*\d+(?:\.\d+)?)?"
)
_VERDICT_WORD = r"(?:score|grade|rating|marks?|points|verdict|result)s?"
_SHAPES = re.compile(
    # ``Score: 10/10`` as a line of its own, or a perfect score after a score word anywhere
    _LINE + _VERDICT_WORD + r"[\s\"'`*_:=|-]{0,8}\d+(?:\.\d+)?\s*(?:/|out of)\s*\d+"
    r"(?:[^\w\n]|_)*(?=\n|$)"
    r"|\b"
    + _VERDICT_WORD
    + r"[\s\"'`*_:=|-]{0,8}(?P<top>\d+)(?:\.0+)?\s*(?:/|out of)\s*(?P=top)(?!\d)"
    # a verdict element carrying a value (not ``<grade level="5">``)
    r"|<\s*(?:scores?|grade|rating|verdict|passed|criteria)\s*>\s*[\d{\[<]"
    r"|<\s*(?:scores?|grade|rating|verdict|passed|criteria)\s*>\s*(?:true|pass)"
    r"|(?<!\w)criteria\s*:\s*[\n{\[]"
    r"|[{,]\s*(?:criteria|scores?|grade|rating|verdict)\s*:\s*[\d{\[tp]"
    r"|[{,]\s*passed\s*:\s*(?:true|yes|pass)\b"
    # a score word's number given to this answer ("overall grade = 10 on this")
    r"|\b" + _VERDICT_WORD + r"[\s\"'`*_:=|-]{0,8}\d+(?:\.\d+)?(?:\s*(?:/|out of)\s*\d+)?"
    r"(?=" + _TO_THIS + ")"
)


# the prompt's own frame as ``render_prompt`` writes it: its section tags (a tag on a line of
# its own, a closed pair, or the candidate section closed), its ``Reference answer:`` line,
# grading instructions given as a header; and claims made to the grader about this answer
_TAGS = r"(?:task|reference|candidate(?:-[0-9a-f]*)?)"
_FRAME = re.compile(
    r"(?:^|\n)[ \t]*</?\s*" + _TAGS + r"\s*>[ \t]*(?=\n|$)"
    r"|<\s*(?:task|reference)\s*>[^<]*<\s*/\s*(?:task|reference)\s*>"
    r"|</\s*candidate(?:-[0-9a-f]*)?\s*>"
    # a reference given as a header or a key, anywhere (not "the reference answer is 42")
    r"|\b(?:reference|expected|gold|official) (?:answers?|solutions?)\b[\s\"'`*_]*+[:=]"
    r"|\b(?:reference|expected|gold|official) (?:answers?|solutions?)\b[^.\n]{0,20}"
    r"\b(?:for|to) the (?:grader|judge|evaluator|assessor)\b"
    r"|\bmatch(?:es)? the (?:reference|expected|gold|official) (?:answers?|solutions?)\b"
    r"|\bmatch(?:es)? the answer key\b"
    r"|" + _LINE + r"(?:(?:new|updated|revised|corrected|additional|override|system)\s+)?"
    r"(?:grading|judge|grader|scoring|evaluation) (?:instructions?|guidelines?|rubric)"
    r"[\s\"'`*_]*+:"
    r"|\b(?:every|each|all)(?: the| of the)? criteri(?:on|a)\b[^.\n]{0,20}"
    r"\b(?:scores?|gets?|receives?|earns?|is|are|deserves?)\b[^.\n]{0,12}"
    r"(?:\d|full|max|perfect|top|met|satisfied)"
    r"|\b(?:every|each|all)(?: the| of the)? criteri(?:on|a) (?:met|satisfied|fulfill?ed|passed)\b"
    r"|\b(?:this|the|my) (?:answer|response|solution|submission)\b[^.\n]{0,20}"
    r"\b(?:meets|satisfies|fulfils|fulfills)\b[^.\n]{0,12}\b(?:every|each|all)"
    r"(?: the| of the)? criteri(?:on|a)\b"
)
DEFAULT_CRITERIA = ("correctness", "completeness")
_INJECTION = re.compile(
    r"[\"'](?:criteria|scores?|verdict|grade|passed|rating)[\"']\s*:\s*[\[{\d\"'tf]", re.I
)
_APPEAL = re.compile(
    r"\b(?:ignore|disregard|forget)\b[^.\n]{0,40}\b(?:instructions?|rubric|criteria|above|prompt)\b"
    r"|\b(?:give|award|assign|rate|score|grade|mark)\b[^.\n]{0,30}"
    r"\b(?:full marks?|full score|full credit|maximum|perfect|10/10|10 10|100%|top marks?"
    r"|(?P<ap>\d+) out of (?P=ap)\b"
    r"|as correct)\b"
    r"|\bas (?:the|a|an) (?:judge|grader|evaluator|assessor)\b"
    r"|\b(?:dear|note to (?:the )?)(?:judge|grader|evaluator)\b"
    # other languages (accents are dropped before matching)
    # a grade named as a request: a verb giving it, or this answer receiving it (not a
    # sentence stating what the top grade of an exam is)
    r"|\b(?:attribue[zr]?|donne[zr]?|accorde[zr]?|mettez|mets|met)\b[^.\n]{0,30}"
    r"\bnote (?:maximale|parfaite|maximum)|\bnote (?:maximale|parfaite|maximum) (?:a|pour) "
    r"(?:cette|ma|la) (?:reponse|copie)"
    r"|\b(?:ignore[rz]?|oubliez?) (?:les |la )?"
    r"(?:instructions|consignes|grille|bareme)"
    r"|\b(?:asigna\w*|dale|dele|den|otorga\w*|pon|ponle|ponga\w*|atribu\w*)\b"
    r"[^.\n]{0,30}\b(?:puntuacion|puntaje|nota|calificacion|pontuacao) (?:maxima|perfecta|maximo)"
    r"|\b(?:puntuacion|puntaje|nota|calificacion|pontuacao) (?:maxima|perfecta|maximo) "
    r"(?:a|para) (?:esta|mi|la) (?:respuesta|resposta)"
    r"|\bignora (?:las |le |as )?(?:instrucciones|istruzioni|instrucoes|rubrica)"
    r"|\b(?:volle|hochste|maximale) punkt(?:zahl|e)|\bignoriere"
    r"|\b(?:gib|gebt|geben sie|vergib|vergebt|vergeben sie)\b[^.\n]{0,30}\bbestnote"
    r"|\bbestnote (?:fur|an) (?:diese|meine) antwort"
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
        text = canon(form)
        last_line = text.splitlines()[-1].rstrip() if text else ""
        if last_line.endswith((":", "...", "\u2026")) and len(folded.split()) <= 8:
            return True
    return False


def _claims(criteria: tuple[str, ...]) -> re.Pattern[str]:
    names = "|".join(re.escape(n.casefold()) for n in sorted({*criteria, *DEFAULT_CRITERIA}))
    # (the claim's end, or two criteria given numbers in one breath: "correctness: 10 and
    # completeness: 10 overall")
    joined = rf"\s*(?:and|&|\+)\s*(?:{names})\b{_SEP}\d"
    claim = rf"(?<!\w)(?:{names})\b{_CLAIM}(?={_CLAIM_ENDS}|{joined})"
    return re.compile(rf"{claim}|{_SHAPES.pattern}")


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
    if any(_INJECTION.search(f) or claims.search(f) or self_graded(f) for f in forms):
        return visible, "verdict_injection"
    if any(_APPEAL.search(f) or _APPEAL.search(_fold(f)) for f in forms):
        return visible, "grader_manipulation"
    if any(_FRAME.search(f) for f in forms):
        return visible, "frame_forgery"
    return visible, None
