"""Tokens to a small node tree. A hand-written recursive-descent parser; nothing is evaluated.

Nodes are tuples whose first item names the kind:

- leaves: ``("num", "12.5")``, ``("repdec", "0.1", "6")`` (0.1666...), ``("mixed", w, p, q)``,
  ``("sym", "x_1")``, ``("const", "pi"|"infty"|"emptyset"|"mathbb:R")``, ``("text", s)``;
- arithmetic: ``("sum", [(sign, node), ...])`` with sign in ``+ - pm mp``, ``("prod", [(op,
  node), ...])`` with op in ``* /``, ``("neg", n)``, ``("pow", b, e)``, ``("fact", n, k)``,
  ``("func", name, arg, base, power)``, ``("sqrt", arg, index)``, ``("binom", n, k)``,
  ``("abs"|"floor"|"ceil", n)``, ``("deg"|"pct", n)``, ``("unit", n, unit)``;
- structure: ``("group", open, close, items)``, ``("set", items)``, ``("list", items)`` (a bare
  comma list), ``("alt", items)`` ("or", ";"), ``("rel", parts, ops)``, ``("setop", op, a, b)``,
  ``("matrix", rows)``.

The parser bounds its own recursion (``MAX_DEPTH``), so deep nesting is a ``TooLarge`` error,
never a ``RecursionError``.
"""

from __future__ import annotations

from gymforge.verify.math.atoms import MATRIX_ENVS, MAX_DEPTH, Atoms, Node
from gymforge.verify.math.lexer import ParseError, Tok, normalize, tokenize

__all__ = ["MATRIX_ENVS", "MAX_DEPTH", "RELOPS", "Node", "ParseError", "parse"]
RELOPS = {"=", "<", ">", "<=", ">=", "!=", "in", "approx"}
_IMPLICIT_CMDS = {"frac", "sqrt", "binom", "pi", "infty", "lfloor", "lceil"}


def parse(text: str) -> Node:
    """The node tree of one answer. Raises ``ParseError`` or ``TooLarge``."""
    toks = tokenize(normalize(text))
    if len(toks) == 1:
        raise ParseError("empty answer")
    return _Parser(toks).answer()


class _Parser(Atoms):
    # ---- levels, lowest precedence first -------------------------------------------------
    def answer(self) -> Node:
        alts = [self.comma_list()]
        while self.at("sep") or self.at("op", ";"):
            self.next()
            if self.at("eof"):
                break
            alts.append(self.comma_list())
        if not self.at("eof"):
            raise ParseError(f"unexpected {self.peek().text!r}")
        return alts[0] if len(alts) == 1 else ("alt", alts)

    def comma_list(self) -> Node:
        items = [self.relation()]
        while self.at("op", ","):
            self.next()
            items.append(self.relation())
        return items[0] if len(items) == 1 else ("list", items)

    def relation(self) -> Node:
        parts, ops = [self.with_unit()], []
        while self.peek().text in RELOPS and self.peek().kind in ("op", "cmd"):
            ops.append(self.next().text)
            parts.append(self.with_unit())
        return parts[0] if not ops else ("rel", parts, ops)

    def with_unit(self) -> Node:
        node = self.set_expr()
        if not self.at("text"):
            return node
        unit = self.next().text
        while True:
            if self.at("op", "^"):
                self.next()
                unit += "^" + self._raw_exponent()
            elif self.at("op", "/") and self.peek(1).kind in ("text", "sym"):
                self.next()
                unit += "/" + self.next().text
            elif self.at("text"):
                unit += " " + self.next().text
            else:
                return ("unit", node, unit)

    def _raw_exponent(self) -> str:
        if self.at("num") or self.at("sym"):
            return self.next().text
        if self.at("op", "{"):
            self.next()
            parts = []
            while not self.at("op", "}"):
                if self.at("eof"):
                    raise ParseError("unbalanced unit exponent")
                parts.append(self.next().text)
            self.next()
            return "".join(parts)
        raise ParseError("bad unit exponent")

    def set_expr(self) -> Node:
        left = self.arith()
        while self.at("cmd") and self.peek().text in ("cup", "cap", "setminus"):
            op = self.next().text
            left = ("setop", op, left, self.arith())
        return left

    def arith(self) -> Node:
        terms: list[tuple[str, Node]] = []
        sign = "+"
        if self.at("op", "-") or self.at("op", "+") or self.at("cmd", "pm") or self.at("cmd", "mp"):
            sign = self.next().text
        terms.append((sign, self.term()))
        while True:
            t = self.peek()
            if (t.kind == "op" and t.text in "+-") or (t.kind == "cmd" and t.text in ("pm", "mp")):
                self.next()
                terms.append((t.text, self.term()))
            else:
                break
        if len(terms) == 1 and terms[0][0] == "+":
            return terms[0][1]
        return ("sum", terms)

    def term(self) -> Node:
        factors: list[tuple[str, Node]] = [("*", self.power())]
        while True:
            t = self.peek()
            if t.kind == "op" and t.text in ("*", "/"):
                self.next()
                if self.at("op", "-"):  # 2 \cdot -3
                    self.next()
                    factors.append((t.text, ("neg", self.power())))
                else:
                    factors.append((t.text, self.power()))
            elif self.starts_implicit(t):
                factors.append(("*", self.power()))
            else:
                break
        return factors[0][1] if len(factors) == 1 else ("prod", factors)

    def starts_implicit(self, t: Tok) -> bool:
        if t.kind in ("sym", "func"):
            return True
        if t.kind == "cmd":
            return t.text in _IMPLICIT_CMDS
        prev = self.toks[self.i - 1] if self.i else None
        closed = prev is not None and prev.kind == "op" and prev.text in (")", "]")
        if t.kind == "op":
            if t.text == "[":  # 2[x+1], (a)[b]: a bracket after a number or a bracket
                return closed or (prev is not None and prev.kind == "num")
            return t.text in ("(", "{") or (t.text == "|" and self.abs_depth == 0)
        if t.kind == "num":
            # (n+1)2^n and (1+2)2: a number right after a closing bracket multiplies; a
            # number after anything else never does ("2 3" is not 6, "x^2 3" is no answer)
            return closed
        return False

    def power(self) -> Node:
        base = self.postfix(self.primary())
        if self.at("op", "^"):
            self.next()
            if self._degree_mark():
                return self.postfix(("deg", base))
            base = self.postfix(("pow", base, self.exponent()))
        return base

    def _degree_mark(self) -> bool:
        if self.at("cmd", "deg"):
            self.next()
            return True
        braced = self.peek(1), self.peek(2)
        if self.at("op", "{") and braced == (Tok("cmd", "deg"), Tok("op", "}")):
            self.i += 3
            return True
        return False

    def exponent(self) -> Node:
        self.enter()
        try:
            t = self.peek()
            if t.kind == "op" and t.text == "{":
                return self.braced()
            if t.kind == "op" and t.text in "-+":
                self.next()
                e = self.exponent()
                return ("neg", e) if t.text == "-" else e
            base = self.primary()
            if self.at("op", "^"):  # 2^3^4 is 2^(3^4)
                self.next()
                return ("pow", base, self.exponent())
            return base
        finally:
            self.depth -= 1

    def postfix(self, node: Node) -> Node:
        while True:
            if self.at("op", "!"):
                self.next()
                k = 1
                if self.at("op", "!"):
                    self.next()
                    k = 2
                node = ("fact", node, k)
            elif self.at("cmd", "pct"):
                self.next()
                node = ("pct", node)
            elif self.at("cmd", "deg"):
                self.next()
                node = ("deg", node)
            else:
                return node
