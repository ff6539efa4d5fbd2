"""LaTeX answer text to tokens. Pure, linear-time, no evaluation of any kind.

The lexer only knows a fixed vocabulary: every backslash command it does not recognise is a
``ParseError``. Words made of letters are split into single-letter symbols (LaTeX semantics:
``xy`` is ``x*y``) except a few words with a meaning of their own: ``or``/``and`` (alternatives),
bare function names (``sin``, ``ln``...), ``pi`` and ``sqrt``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_DIGITS = 4000  # one literal; Python refuses int(str) beyond 4300 digits anyway


class ParseError(ValueError):
    """The text is not an answer this parser understands."""


class TooLarge(ValueError):
    """The text or a value it denotes exceeds a size limit; nothing was evaluated."""


@dataclass(frozen=True, slots=True)
class Tok:
    """``kind`` is one of: num, sym, func, cmd, op, text, sep, begin, end, eof."""

    kind: str
    text: str


FUNCS = {
    "sin", "cos", "tan", "sec", "csc", "cot", "arcsin", "arccos", "arctan", "arcsec", "arccsc",
    "arccot", "sinh", "cosh", "tanh", "coth", "ln", "log", "exp", "lg",
}  # fmt: skip
GREEK = {
    "alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta",
    "vartheta", "iota", "kappa", "lambda", "mu", "nu", "xi", "rho", "sigma", "tau", "upsilon",
    "phi", "varphi", "chi", "psi", "omega", "Gamma", "Delta", "Theta", "Lambda", "Xi", "Sigma",
    "Upsilon", "Phi", "Psi", "Omega",
}  # fmt: skip
# Commands that become parser tokens under a canonical name.
CMDS = {
    "frac": "frac", "dfrac": "frac", "tfrac": "frac", "cfrac": "frac", "sqrt": "sqrt",
    "binom": "binom", "dbinom": "binom", "tbinom": "binom", "pi": "pi", "infty": "infty",
    "infin": "infty", "cdot": "*", "times": "*", "ast": "*", "div": "/", "pm": "pm",
    "mp": "mp", "le": "<=", "leq": "<=", "leqslant": "<=", "ge": ">=", "geq": ">=",
    "geqslant": ">=", "lt": "<", "gt": ">", "ne": "!=", "neq": "!=", "in": "in",
    "approx": "approx", "cup": "cup", "cap": "cap", "setminus": "setminus", "lfloor": "lfloor",
    "rfloor": "rfloor", "lceil": "lceil", "rceil": "rceil", "langle": "langle",
    "rangle": "rangle", "emptyset": "emptyset", "varnothing": "emptyset", "circ": "deg",
    "degree": "deg", "textdegree": "deg", "overline": "overline", "lvert": "|", "rvert": "|",
    "vert": "|", "imath": "i", "infinity": "infty",
}  # fmt: skip
TRANSPARENT = {
    "left", "right", "bigl", "bigr", "big", "Big", "bigg", "Bigg", "Bigl", "Bigr", "biggl",
    "biggr", "Biggl", "Biggr", "bigm", "Bigm", "displaystyle", "textstyle", "limits",
    "nolimits", "mathbf", "boldsymbol", "bm", "mathit", "mathsf", "mathcal", "boxed", "fbox",
    "quad", "qquad", "enspace", "thinspace", "medspace", "thickspace", "negthinspace", "dollar",
    "mathnormal", "mathscr", "mathfrak", "color", "ensuremath",
}  # fmt: skip
RAW_ARG = {
    "text", "textbf", "textit", "textrm", "textsf", "texttt", "textup", "textnormal", "mbox",
    "mathrm", "operatorname", "mathbb", "hspace", "begin", "end", "color", "textcolor", "unit",
}  # fmt: skip
CONJUNCTIONS = {"or", "and", ",", "or,", "and/or", "either", "respectively"}
WORDS = {"or": "sep", "and": "sep", "pi": "cmd", "sqrt": "cmd", "infinity": "cmd"}
_UNICODE = {
    "\u2212": "-", "\u00d7": r"\times ", "\u00b7": r"\cdot ", "\u22c5": r"\cdot ",
    "\u00f7": r"\div ", "\u03c0": r"\pi ", "\u221e": r"\infty ", "\u221a": r"\sqrt",
    "\u2264": r"\le ", "\u2265": r"\ge ", "\u2260": r"\ne ", "\u222a": r"\cup ", "\u2229": r"\cap ",
    "\u2208": r"\in ", "\u00b1": r"\pm ", "\u2213": r"\mp ", "\u00b0": r"^\circ ",
    "\u2205": r"\emptyset ", "\u2032": "'", "\u2248": r"\approx ", "\u00a0": " ",
    "\u00b2": "^{2}", "\u00b3": "^{3}",
}  # fmt: skip
_UNICODE_RE = re.compile("|".join(map(re.escape, _UNICODE)))
# LaTeX thousands separators ``1{,}000``, ``1\,000`` and ``1~000``: joined before lexing.
_THOUSANDS_RE = re.compile(r"(?<=\d)(?:\{,\}|\\,|\\!|\\ |~)(?=\d{3}(?!\d))")
_SPACE_CMDS = {",", ";", ":", "!", " ", ">"}
# An en dash where only a sign can stand (first, or after an operator or an opening bracket,
# spaces aside) is the minus sign: ``\u2013 12``, ``x = \u2013 3``. After a number, a
# letter or a closing bracket it may be a range (``3\u20135``) and is left unread.
_EN_DASH_SIGN = re.compile(r"(?:^|(?<=[^\w)\]}.\s]))(\s*)\u2013")
_DIGITS = frozenset("0123456789")
_NUM_RE = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+(?![a-zA-Z]))?")
_LETTERS_RE = re.compile(r"[a-zA-Z]+")
_MATHISH_TEXT = re.compile(r"[\s\d.,+\-/]*")
_GROUPED = re.compile(r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_NUMBER_THEN_WORDS = re.compile(r"([-+]?\d[\d,]*(?:\.\d+)?)\s+([A-Za-z][^\\{}$]*)")


def normalize(text: str) -> str:
    """Unicode math symbols to LaTeX, LaTeX thousands separators joined, outer ``$`` and a
    trailing full stop removed."""
    s = _UNICODE_RE.sub(lambda m: _UNICODE[m.group(0)], text)
    if "\u2013" in s:
        s = _EN_DASH_SIGN.sub(r"\1-", s)
    s = _THOUSANDS_RE.sub("", s).strip()
    if s.startswith("$") and s.endswith("$"):
        s = s.strip("$").strip()
    while s.endswith((".", ";")) and not s.endswith(("\\.", "\\;")):
        s = s[:-1].rstrip()
    return s


def _brace_arg(s: str, i: int) -> tuple[str, int]:
    """The raw text of the balanced ``{...}`` group starting at or after ``i``."""
    n = len(s)
    while i < n and s[i].isspace():
        i += 1
    if i >= n or s[i] != "{":
        raise ParseError("expected {")
    depth, j = 0, i
    while j < n:
        c = s[j]
        if c == "\\":
            j += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return s[i + 1 : j], j + 1
        j += 1
    raise ParseError("unbalanced braces")


def _text_tokens(content: str, cmd: str, out: list[Tok]) -> None:
    body = content.strip()
    low = body.lower()
    if not body:
        return
    if low in CONJUNCTIONS:
        out.append(Tok("sep", low))
    elif cmd == "mathrm" and len(body) == 1 and body.isalpha():
        out.append(Tok("sym", body))
    elif cmd == "operatorname":
        out.append(Tok("func", body) if body in FUNCS else Tok("text", body))
    elif _MATHISH_TEXT.fullmatch(body):
        out.extend(t for t in tokenize(body) if t.kind != "eof")
    elif (m := _NUMBER_THEN_WORDS.fullmatch(body)) and " or " not in f" {low} ":
        # \text{252 ways}: the number, then its words (judged as words after a number)
        number = m.group(1)
        if _GROUPED.fullmatch(number):
            number = number.replace(",", "")
        out.extend(t for t in tokenize(number) if t.kind != "eof")
        out.append(Tok("text", m.group(2).strip()))
    else:
        words = low.replace(",", " ").split()
        if len(words) > 1 and any(w in ("or", "and") for w in words):
            # "3 or 5" written as text: lex it as math so the alternatives are seen
            out.extend(t for t in tokenize(body) if t.kind != "eof")
        else:
            out.append(Tok("text", body))


def tokenize(text: str) -> list[Tok]:
    """Tokens of ``text`` (already ``normalize``d), ending with an ``eof`` token."""
    s, out, i, n = text, [], 0, len(text)
    while i < n:
        c = s[i]
        if c.isspace() or c in "~$":
            i += 1
        elif c in _DIGITS or (c == "." and i + 1 < n and s[i + 1] in _DIGITS):
            m = _NUM_RE.match(s, i)
            assert m is not None
            if len(m.group(0)) > MAX_DIGITS and sum(c.isdigit() for c in m.group(0)) > MAX_DIGITS:
                raise TooLarge("a number literal has too many digits")
            out.append(Tok("num", m.group(0)))
            i = m.end()
        elif c.isalpha() and c.isascii():
            m = _LETTERS_RE.match(s, i)
            assert m is not None
            word = m.group(0)
            if word in WORDS:
                out.append(Tok(WORDS[word], word))
            elif word in FUNCS and len(word) > 1:
                out.append(Tok("func", word))
            else:
                out.extend(Tok("sym", ch) for ch in word)
            i = m.end()
        elif c == "\\":
            i = _command(s, i, out)
        elif c == "%":
            out.append(Tok("cmd", "pct"))
            i += 1
        elif c == "&":
            out.append(Tok("op", "&"))
            i += 1
        elif c in "+-*/^_()[]{},;|!=<>'":
            if c in "<>!" and i + 1 < n and s[i + 1] == "=":
                out.append(Tok("op", {"<": "<=", ">": ">=", "!": "!="}[c]))
                i += 2
                continue
            out.append(Tok("op", c))
            i += 1
        elif c == ":" and i + 1 < n and s[i + 1] == "=":
            out.append(Tok("op", "="))
            i += 2
        else:
            raise ParseError(f"unexpected character {c!r}")
    out.append(Tok("eof", ""))
    return out


def _command(s: str, i: int, out: list[Tok]) -> int:
    """Lex the command starting at ``s[i] == '\\'``; returns the next index."""
    n = len(s)
    if i + 1 >= n:
        raise ParseError("dangling backslash")
    c = s[i + 1]
    if not c.isalpha():
        if c in "{}":
            out.append(Tok("op", "\\" + c))
        elif c == "\\":
            out.append(Tok("op", "\\\\"))
        elif c == "%":
            out.append(Tok("cmd", "pct"))
        elif c == "|":
            raise ParseError("norms are not supported")
        elif c not in _SPACE_CMDS and c not in "$#&.":
            raise ParseError(f"unknown command \\{c}")
        if c == "&":
            out.append(Tok("op", "&"))
        return i + 2
    j = i + 1
    while j < n and s[j].isalpha():
        j += 1
    name = s[i + 1 : j]
    if name in RAW_ARG:
        arg, j = _brace_arg(s, j)
        if name in ("begin", "end"):
            out.append(Tok(name, arg.strip()))
            if name == "begin" and arg.strip() in ("array", "tabular"):
                _, j = _brace_arg(s, j)  # the column specification
        elif name == "mathbb":
            out.append(Tok("cmd", "mathbb:" + arg.strip()))
        elif name in ("hspace", "color", "textcolor"):
            pass  # the colour or the space; \textcolor's text is the group that follows
        else:
            _text_tokens(arg, name, out)
        return j
    if name in ("left", "right") and j < n and s[j] == ".":
        return j + 1
    if name in TRANSPARENT:
        return j
    if name in CMDS:
        canon = CMDS[name]
        if canon in ("*", "/", "|", "<=", ">=", "<", ">", "!="):
            out.append(Tok("op", canon))
        elif canon == "i":
            out.append(Tok("sym", "i"))
        else:
            out.append(Tok("cmd", canon))
        return j
    if name in FUNCS:
        out.append(Tok("func", name))
        return j
    if name in GREEK:
        out.append(Tok("sym", name))
        return j
    raise ParseError(f"unknown command \\{name}")
