"""Primaries of the answer grammar: numbers, symbols, commands, groups, functions and
matrices, plus the token cursor they share with the precedence levels in ``parser``.

``Atoms`` is the base of the parser; the levels it calls back into (``relation``, ``arith``,
``power``, ``exponent``, ``starts_implicit``) are defined by the subclass.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from gymforge.verify.math.lexer import ParseError, Tok, TooLarge

Node = tuple[Any, ...]
MAX_DEPTH = 60
MATRIX_ENVS = {"matrix", "pmatrix", "bmatrix", "Bmatrix", "smallmatrix", "array"}
_CLOSERS = {"(": (")", "]"), "[": ("]", ")"), "{": ("}",), "\\{": ("\\}",), "langle": ("rangle",)}


class Atoms(ABC):
    """The token cursor and the primaries of the grammar."""

    def __init__(self, toks: list[Tok]) -> None:
        self.toks = toks
        self.i = 0
        self.depth = 0
        self.abs_depth = 0

    # ---- the levels of the subclass -----------------------------------------------------
    @abstractmethod
    def relation(self) -> Node: ...

    @abstractmethod
    def arith(self) -> Node: ...

    @abstractmethod
    def power(self) -> Node: ...

    @abstractmethod
    def exponent(self) -> Node: ...

    @abstractmethod
    def starts_implicit(self, t: Tok) -> bool: ...

    # ---- token helpers ------------------------------------------------------------------
    def peek(self, k: int = 0) -> Tok:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self) -> Tok:
        t = self.toks[self.i]
        self.i += 1
        return t

    def at(self, kind: str, text: str | None = None) -> bool:
        t = self.toks[self.i]
        return t.kind == kind and (text is None or t.text == text)

    def expect(self, kind: str, text: str) -> None:
        if not self.at(kind, text):
            raise ParseError(f"expected {text!r}, got {self.peek().text!r}")
        self.i += 1

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise TooLarge("nesting too deep")

    # ---- primaries ----------------------------------------------------------------------
    def primary(self) -> Node:
        self.enter()
        try:
            return self._primary()
        finally:
            self.depth -= 1

    def _primary(self) -> Node:
        t = self.next()
        k, x = t.kind, t.text
        if k == "num":
            return self._number(x)
        if k == "sym":
            return ("sym", x + self._subscript())
        if k == "text":
            return ("text", x)
        if k == "func":
            return self._func(x)
        if k == "begin":
            return self._matrix(x)
        if k == "op":
            if x in ("(", "[", "\\{"):
                return self._group(x)
            if x == "{":
                self.i -= 1
                return self.braced(allow_list=True)
            if x == "|":
                return self._delimited("abs", "op", "|")
            if x == "-":
                return ("neg", self.power())
        if k == "cmd":
            return self._command(x)
        raise ParseError(f"unexpected {x!r}")

    def _command(self, x: str) -> Node:
        if x in ("pi", "infty", "emptyset") or x.startswith("mathbb:"):
            return ("const", x)
        if x == "frac":
            return ("prod", [("*", self.arg()), ("/", self.arg())])
        if x == "binom":
            return ("binom", self.arg(), self.arg())
        if x == "sqrt":
            index = None
            if self.at("op", "["):
                self.next()
                index = self.arith()
                self.expect("op", "]")
            return ("sqrt", self.arg(paren_ok=True), index)
        if x == "lfloor":
            return self._delimited("floor", "cmd", "rfloor")
        if x == "lceil":
            return self._delimited("ceil", "cmd", "rceil")
        if x == "langle":
            return self._group("langle")
        raise ParseError(f"unexpected \\{x}")

    def _number(self, x: str) -> Node:
        if x.endswith(".") and self.at("cmd", "overline"):
            self.next()
            self.expect("op", "{")
            digits = self.next()
            self.expect("op", "}")
            if digits.kind != "num" or not digits.text.isdigit():
                raise ParseError("bad repeating decimal")
            return ("repdec", x, digits.text)
        if x.isdigit() and self.at("cmd", "frac"):  # a mixed number: 2\frac{1}{2} is 5/2
            save = self.i
            self.next()
            p, q = self.arg(), self.arg()
            if p[0] == "num" and q[0] == "num" and p[1].isdigit() and q[1].isdigit():
                return ("mixed", x, p[1], q[1])
            self.i = save
        return ("num", x)

    def _subscript(self) -> str:
        if not self.at("op", "_"):
            return ""
        self.next()
        if self.at("op", "{"):
            self.next()
            parts = []
            while not self.at("op", "}"):
                t = self.next()
                if t.kind not in ("num", "sym"):
                    raise ParseError("unsupported subscript")
                parts.append(t.text)
            self.next()
            return "_" + "".join(parts)
        t = self.next()
        if t.kind not in ("num", "sym"):
            raise ParseError("unsupported subscript")
        return "_" + t.text

    def braced(self, allow_list: bool = False) -> Node:
        self.expect("op", "{")
        items = [self.relation()]
        while allow_list and self.at("op", ","):
            self.next()
            items.append(self.relation())
        self.expect("op", "}")
        return items[0] if len(items) == 1 else ("list", items)

    def arg(self, paren_ok: bool = False) -> Node:
        """One argument of ``\\frac``, ``\\sqrt``...: a braced group or a single token, of
        which a number contributes only its first digit (``\\frac12`` is one half)."""
        t = self.peek()
        if t.kind == "op" and t.text == "{":
            return self.braced()
        if paren_ok and t.kind == "op" and t.text == "(":
            self.next()  # \sqrt(2): what the writer meant is clear enough
            inner = self.arith()
            self.expect("op", ")")
            return inner
        if t.kind == "num":
            if len(t.text) == 1:
                self.next()
                return ("num", t.text)
            self.toks[self.i] = Tok("num", t.text[1:])
            return ("num", t.text[0])
        if t.kind in ("sym", "cmd"):
            return self.primary()
        raise ParseError("missing argument")

    def _group(self, opener: str) -> Node:
        closers = _CLOSERS[opener]
        items: list[Node] = []
        if not (self.peek().text in closers and self.peek().kind in ("op", "cmd")):
            items.append(self.relation())
            while self.at("op", ","):
                self.next()
                items.append(self.relation())
        t = self.next()
        if t.text not in closers or t.kind not in ("op", "cmd"):
            raise ParseError(f"unclosed {opener}")
        if opener == "\\{":
            return ("set", items)
        if len(items) == 1 and t.text == closers[0] and opener in ("(", "["):
            return items[0]
        if not items:
            raise ParseError("empty brackets")
        return ("group", opener, t.text, items)

    def _delimited(self, kind: str, close_kind: str, close: str) -> Node:
        if kind == "abs":
            self.abs_depth += 1
        try:
            inner = self.arith()
        finally:
            if kind == "abs":
                self.abs_depth -= 1
        self.expect(close_kind, close)
        return (kind, inner)

    def _func(self, name: str) -> Node:
        base: Node | None = None
        power: Node | None = None
        if self.at("op", "_") and name in ("log", "lg"):
            self.next()
            base = self.arg()
        if self.at("op", "^"):
            self.next()
            power = self.exponent()
        if self.at("op", "("):
            self.next()
            arg = self.arith()
            self.expect("op", ")")
        elif self.at("op", "{"):
            arg = self.braced()
        elif base is not None and base[0] == "num" and self._ends_argument():
            # \log_28 means log base 2 of 8, as LaTeX typesets it
            digits = base[1]
            if len(digits) < 2:
                raise ParseError("missing argument")
            base, arg = ("num", digits[0]), ("num", digits[1:])
        else:
            arg = self._implicit_arg()
        return ("func", name, arg, base, power)

    def _ends_argument(self) -> bool:
        t = self.peek()
        return t.kind == "eof" or (t.kind == "op" and t.text in ("+", "-", ")", ",", "=", "}"))

    def _implicit_arg(self) -> Node:
        """``\\sin 2x`` is sin(2x); the argument stops at an operator or another function."""
        factors: list[tuple[str, Node]] = [("*", self.power())]
        while self.peek().kind != "func" and self.starts_implicit(self.peek()):
            factors.append(("*", self.power()))
        return factors[0][1] if len(factors) == 1 else ("prod", factors)

    def _matrix(self, env: str) -> Node:
        if env not in MATRIX_ENVS:
            raise ParseError(f"unsupported environment {env}")
        rows: list[list[Node]] = [[]]
        while not self.at("end"):
            if self.at("eof"):
                raise ParseError("unclosed matrix")
            if self.at("op", "&"):
                self.next()
                continue
            if self.at("op", "\\\\"):
                self.next()
                rows.append([])
                continue
            rows[-1].append(self.relation())
        if self.next().text != env:
            raise ParseError("mismatched \\end")
        rows = [r for r in rows if r]
        if not rows or len({len(r) for r in rows}) != 1:
            raise ParseError("ragged matrix")
        return ("matrix", rows)
