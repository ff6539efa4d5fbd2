"""Answer extraction: the last fenced code block for the language, else the whole answer."""

from __future__ import annotations

import re

ALIASES: dict[str, frozenset[str]] = {
    "python": frozenset({"python", "py", "python3"}),
    "c": frozenset({"c", "h"}),
    "cpp": frozenset({"cpp", "c++", "cc", "cxx", "hpp"}),
    "javascript": frozenset({"javascript", "js", "node", "nodejs"}),
}


def canonical_language(name: str) -> str | None:
    """The language tag (``python``, ``c``, ``cpp``, ``javascript``) a name or fence tag
    stands for, any case; None if it names none."""
    key = name.strip().lower()
    return next((lang for lang, names in ALIASES.items() if key in names), None)


_FENCE = re.compile(
    r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+#.-]*)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.S | re.M
)


def extract_code(answer: str, language: str = "python") -> str:
    """The last fenced block tagged for ``language`` (or untagged), else the whole answer.

    A block tagged for another language never counts: ``language`` decides what is run.
    """
    names = ALIASES.get(language, frozenset({language}))
    found = [body for _, tag, body in _FENCE.findall(answer) if not tag or tag.lower() in names]
    if found:
        return found[-1]
    if answer.count("```") % 2 == 1:  # an unterminated fence: take what follows the last opening
        tail = answer.rsplit("```", 1)[1]
        first, _, rest = tail.partition("\n")
        if not first.strip() or first.strip().lower() in names:
            return rest
    return answer
