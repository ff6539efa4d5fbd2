"""When a simulated counterpart's answer reveals a hidden value: one rule, for every one.

A model in the customer's or the requester's place (``world.sim.PolicyUser``,
``envs.crm.requester.PolicyRequester``) is read by its text: a value counts as revealed
when the answer names it. Naming is not enough when the answer names a look-alike too: a
counterpart repeating the agent's question ("Jane Doe or Jane Smith?", "is your ZIP 48213
or 48214?"), or not sure which, settles nothing, and an agent that offers the candidates
must not be paid for its guess. So (:func:`reveals`) an answer reveals a value when it names
it as a whole ("48213", never inside "482130"; "Jane Lee", never inside "Jane Leeds") and
names none of its look-alikes.

Where the look-alikes come from is the caller's: the records the truth knows an ambiguous
request could mean (crm), or the candidates of the value's shape that the agent's message
offered (:func:`offered`: "48214" beside a ZIP, another address beside an email, another
date beside a date).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_RUN = re.compile(r"[^\W\d_]+|\d+|\s+|.", re.S)


def names(value: str, text: str) -> bool:
    """Whether ``text`` names ``value`` as a whole, ignoring case: not inside a longer word
    or number."""
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text, re.I) is not None


def reveals(answer: str, value: str, look_alikes: Iterable[str] = ()) -> bool:
    """Whether ``answer`` names ``value`` as a whole and none of ``look_alikes`` (those
    equal to ``value`` aside)."""
    if not value or not names(value, answer):
        return False
    low = value.lower()
    return not any(names(o, answer) for o in look_alikes if o and o.lower() != low)


def shape(value: str) -> re.Pattern[str] | None:
    """A pattern for candidates of ``value``'s shape: its punctuation as it is, any letters
    for each run of letters, as many digits for a run of digits standing alone (a ZIP, a
    date's parts) and any for one in a word (``dana.smith7``). None for a value that has no
    digit or holds a space (a name, a word: any word would be a candidate; such look-alikes
    must come from the truth)."""
    if not any(c.isdigit() for c in value) or any(c.isspace() for c in value):
        return None
    runs = _RUN.findall(value)
    parts = []
    for i, run in enumerate(runs):
        if run[0].isdigit():
            near = [runs[j] for j in (i - 1, i + 1) if 0 <= j < len(runs)]
            in_word = any(r[0].isalpha() for r in near)
            parts.append(r"\d*" if in_word else rf"\d{{{len(run)}}}")
        elif run[0].isalpha():
            parts.append(r"[^\W\d_]+")
        else:
            parts.append(re.escape(run))
    return re.compile(rf"(?<!\w)(?:{''.join(parts)})(?!\w)", re.I)


def offered(value: str, text: str) -> list[str]:
    """The candidates of ``value``'s shape (:func:`shape`) that ``text`` names, other than
    ``value`` itself: what an agent's question offered beside it."""
    pattern = shape(value)
    if pattern is None:
        return []
    low = value.lower()
    return sorted({m.group(0) for m in pattern.finditer(text) if m.group(0).lower() != low})
