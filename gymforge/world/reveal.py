"""When a simulated counterpart's answer reveals a hidden value: one rule, for every one.

A model in the customer's or the requester's place (``world.sim.PolicyUser``,
``envs.crm.requester.PolicyRequester``) is read by its text: a value counts as revealed
when the answer names it. Naming is not enough when the answer names a look-alike too: a
counterpart repeating the agent's question ("Jane Doe or Jane Smith?", "is your ZIP 48213
or 48214?"), or not sure which, settles nothing, and an agent that offers the candidates
must not be paid for its guess. Nor when it echoes an agent's message that named the value
(:func:`echoes`: the whole message, or its words around the value): a counterpart
repeating "Do you mean Jane Doe?" names the one candidate the agent offered, and an agent
asking about each candidate in turn would get the meant one "revealed" without anyone
choosing. So (:func:`reveals`) an answer reveals a value when it
names it as a whole ("48213", never inside "482130"; "Jane Lee", never inside "Jane
Leeds"), never running on into a longer one (:func:`runs_on`: "a@b.example.com", "Jane
Lee-Smith"), names none of its look-alikes and does not merely echo a message that named it.

Every text is read folded (:func:`fold`): an agent that writes its guess with a zero-width
space, a look-alike letter or full-width digits must not have it missed in its message and
found in a model's clean repetition of it.

Where the look-alikes come from is the caller's: the records the truth knows an ambiguous
request could mean (crm), or the candidates of the value's shape that the agent's message
offered (:func:`offered`: "48214" beside a ZIP, another address beside an email, another
date beside a date).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from gymforge.wording import plain

_RUN = re.compile(r"[^\W\d_]+|\d+|\s+|.", re.S)
_WORD = re.compile(r"\w+")
_SPACE = re.compile(r"\s+")
_ADDRESS = re.compile(r"(?<![\w.+\-])[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+")
"""Any email address: the shape of a value that is one (:func:`shape`). It starts only where
a run of its characters does, so it stays linear in the text's length."""
_JOIN = r"[.@+\-]"
"""What joins a value to more of a longer address, name or number (:func:`runs_on`)."""
_LATIN = str.maketrans(
    "\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0456\u0458\u0455\u0501"
    "\u04bb\u04cf\u03bf\u03b1\u03b9\u03ba\u03bd\u03c1\u03c4\u03c5\u03c7",
    "aeopcyxijsdhloaikvptux",
)
"""Cyrillic and Greek letters (case folded) that look like Latin ones, as the Latin."""
Words = tuple[str, ...]
CONTEXT = 3
"""Words either side of a value that, copied from the agent's message, make its naming an
echo (:func:`copied`)."""


def fold(text: str) -> str:
    """``text`` as every rule here reads it: compatibility forms as their plain ones (NFKC:
    full-width digits, a no-break space, a long s), format characters (a zero-width space, a
    soft hyphen) dropped, case folded, Cyrillic and Greek look-alikes as Latin letters, each
    run of spaces one space. An agent cannot write a value so that the rules miss it in its
    message while a model repeating the message writes it plainly."""
    if text.isascii():  # nothing to normalise, drop or map
        return _SPACE.sub(" ", text.lower())
    return _SPACE.sub(" ", plain(text).casefold().translate(_LATIN))


def names(value: str, text: str) -> bool:
    """Whether ``text`` names ``value`` as a whole, both read folded (:func:`fold`): not
    inside a longer word or number."""
    return re.search(rf"(?<!\w){re.escape(fold(value))}(?!\w)", fold(text)) is not None


def runs_on(value: str, text: str) -> bool:
    """Whether ``text`` names ``value`` running on into a longer address, name or number:
    joined by a dot, ``@``, ``+`` or hyphen to more word characters on either side
    ("a@b.example" in "a@b.example.com", "Jane Lee" in "Jane Lee-Smith"), a look-alike no
    shape finds. A full stop after it ends it ("It is a@b.example.")."""
    v, t = re.escape(fold(value)), fold(text)
    whole = rf"(?<!\w){v}(?!\w)"
    alone = rf"(?<!\w)(?<!\w{_JOIN}){v}(?!\w)(?!{_JOIN}\w)"
    return len(re.findall(whole, t)) != len(re.findall(alone, t))


def repeats(answer: str, message: str) -> bool:
    """Whether ``answer`` holds the whole of ``message``: its words in order, ignoring case,
    punctuation and spacing (an echo, however it is framed)."""
    said = " ".join(_words(message))
    return bool(said) and f" {said} " in f" {' '.join(_words(answer))} "


def copied(answer: str, value: str, message: str) -> bool:
    """Whether every naming of ``value`` in ``answer`` is copied from a naming of it in
    ``message``: on each side, the :data:`CONTEXT` words next to it are the message's there,
    or the message has fewer there (nothing to compare) and the other side has them; or the
    answer starts or ends there, its words on that side are the message's nearest ones and
    :data:`CONTEXT` words about it are copied in all (:func:`_cut`). An echo cut short or
    framed ("Echo: is your ZIP 48213? I ask because", "Is your ZIP 48213") is copied; an
    answer in its own words ("Yes, 48213 is right", "ZIP 48213"), or one that borrows the
    words on one side only ("Yes, Jane Doe, the VP of Sales"), is not. Linear in the
    texts' lengths, however often they name the value."""
    v, a, m = _words(value), _words(answer), _words(message)
    sides = [_around(m, j, len(v)) for j in _at(v, m)]
    both: set[tuple[Words, Words]] = set()
    before_only: set[Words] = set()
    after_only: set[Words] = set()
    for before, after in sides:
        if len(before) == CONTEXT and len(after) == CONTEXT:
            both.add((before, after))
        elif len(before) == CONTEXT:
            before_only.add(before)
        elif len(after) == CONTEXT:
            after_only.add(after)

    def echo(i: int) -> bool:
        before, after = _around(a, i, len(v))
        if (before, after) in both or before in before_only or after in after_only:
            return True
        start, end = i < CONTEXT, i + len(v) + CONTEXT > len(a)
        # at most 2 * CONTEXT + len(v) spots are at an edge: linear still
        return (start or end) and any(_cut(before, after, s, start, end) for s in sides)

    spots = _at(v, a)
    return bool(spots) and all(echo(i) for i in spots)


def _cut(before: Words, after: Words, said: tuple[Words, Words], start: bool, end: bool) -> bool:
    """Whether the words ``before`` and ``after`` a naming at the answer's ``start`` or
    ``end`` are an echo, cut there, of the message's words ``said`` around one: each side
    the message's, or its nearest words where the answer is cut, :data:`CONTEXT` in all."""
    b, a = said
    b_ok = before == b or (start and b[len(b) - len(before) :] == before)
    a_ok = after == a or (end and a[: len(after)] == after)
    return b_ok and a_ok and len(before) + len(after) >= CONTEXT


def opens_copied(answer: str, message: str) -> bool:
    """Whether ``answer`` opens with words copied from ``message``: its first
    1 + :data:`CONTEXT` words stand in the message in that order (a "yes" the agent wrote,
    repeated). A shorter answer ("Yes, go ahead.") is its own."""
    head = _words(answer)[: 1 + CONTEXT]
    return len(head) == 1 + CONTEXT and bool(_at(head, _words(message)))


def _around(words: list[str], i: int, n: int) -> tuple[Words, Words]:
    """The words before and after ``words[i : i + n]``, :data:`CONTEXT` at most a side."""
    return tuple(words[max(i - CONTEXT, 0) : i]), tuple(words[i + n : i + n + CONTEXT])


def echoes(answer: str, value: str, message: str) -> bool:
    """Whether ``answer`` names ``value`` only as an echo of ``message``, which named it:
    the whole message repeated (:func:`repeats`), or its words around the value
    (:func:`copied`)."""
    if not names(value, message):
        return False
    return repeats(answer, message) or copied(answer, value, message)


def reveals(answer: str, value: str, look_alikes: Iterable[str] = (), asked: str = "") -> bool:
    """Whether ``answer`` names ``value`` as a whole, never running on into a longer one
    (:func:`runs_on`), and none of ``look_alikes`` (those equal to ``value`` aside), and
    not as an echo of ``asked``, the message it answers (:func:`echoes`)."""
    if not value or not names(value, answer) or runs_on(value, answer):
        return False
    if echoes(answer, value, asked):
        return False
    own = fold(value)
    return not any(names(o, answer) for o in look_alikes if o and fold(o) != own)


def _words(text: str) -> list[str]:
    return _WORD.findall(fold(text))


def _at(part: list[str], words: list[str]) -> list[int]:
    """Where the word sequence ``part`` starts in ``words``."""
    n = len(part)
    if not n:
        return []
    return [i for i, w in enumerate(words) if w == part[0] and words[i : i + n] == part]


def shape(value: str) -> re.Pattern[str] | None:
    """A pattern for candidates of ``value``'s shape: its punctuation as it is, any letters
    for each run of letters, as many digits for a run of digits standing alone (a ZIP, a
    date's parts) and any for one in a word (``dana.smith7``); for an email address, any
    address (:data:`_ADDRESS`: "jamie.kim2@orchid.example" beside "jamie.kim@orchid.com").
    None for a value that holds a space or, not an address, has no digit (a name, a word:
    any word would be a candidate; such look-alikes must come from the truth)."""
    if any(c.isspace() for c in value):
        return None
    if "@" in value:
        return _ADDRESS
    if not any(c.isdigit() for c in value):
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
    own = fold(value)
    pattern = shape(own)
    if pattern is None:
        return []
    return sorted({m.group(0) for m in pattern.finditer(fold(text)) if m.group(0) != own})
