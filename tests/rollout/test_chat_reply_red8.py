"""Red-team of the chat reader's second decode (``chat_reply._TOKEN_DECODER``): the logprob
entries' tokens are read only for an answer without ``token_ids``. An adversarial server
tries to make the two decodes see different tokens, or the fast reader differ from the
reference (``jiter`` whole, then ``reply_from_json``), with duplicate keys, escaped keys,
odd token values and string escapes; and a generated property over raw JSON text with
duplicate keys. Only the module's two stated differences (nesting past 200 levels, an
integer past 4,300 digits) may part them, and only in a token the turn does not read."""

from __future__ import annotations

import json

import pytest
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_chat_reply import count_token_decodes, outcome, reference

from gymforge.rollout import chat_reply
from gymforge.rollout.chat_reply import read_chat

_P = b', "prompt_token_ids": [1]}'


def _entry_answer(entries: bytes, choice_tail: bytes = b"") -> bytes:
    return b'{"choices": [{"logprobs": {"content": [' + entries + b"]}" + choice_tail + b"}]" + _P


DUPLICATES = [
    # "logprobs" twice: both decodes keep the last, as jiter does
    b'{"choices": [{"logprobs": {"content": [{"logprob": -1, "token": "token_id:1"}]}, '
    b'"logprobs": {"content": [{"logprob": -2, "token": "token_id:2"}]}}]}',
    b'{"choices": [{"logprobs": {"content": [{"logprob": -1, "token": "token_id:1"}]}, '
    b'"logprobs": null}]}',
    b'{"choices": [{"logprobs": null, '
    b'"logprobs": {"content": [{"logprob": -1, "token": "token_id:1"}]}}]}',
    b'{"choices": [{"logprobs": {"content": [{"logprob": -1, "token": 5}]}, '
    b'"logprobs": {"content": [{"logprob": -1, "token": "token_id:1"}]}}]}',
    b'{"choices": [{"logprobs": {"content": [{"logprob": -1, "token": "token_id:1"}]}, '
    b'"logprobs": {"content": [{"logprob": -1, "token": 5}]}}]}',
    # "content" twice inside logprobs
    b'{"choices": [{"logprobs": {"content": [{"logprob": -1, "token": "token_id:1"}], '
    b'"content": null}}]}',
    b'{"choices": [{"logprobs": {"content": null, '
    b'"content": [{"logprob": -1, "token": "token_id:1"}]}}]}',
    b'{"choices": [{"logprobs": {"content": [{"logprob": -1, "token": "token_id:1"}], '
    b'"content": []}}]}',
    b'{"choices": [{"logprobs": {"content": [{"logprob": -1, "token": "token_id:1"}], '
    b'"content": [{"logprob": -1, "token": "token_id:2"}, '
    b'{"logprob": -1, "token": "token_id:3"}]}}]}',
    b'{"choices": [{"logprobs": {"content": [{"logprob": -1, "token": "token_id:1"}], '
    b'"content": [{"logprob": -1, "token": 3}]}}]}',
    # "token" / "logprob" twice in an entry
    _entry_answer(b'{"logprob": -1, "token": "token_id:1", "token": "token_id:9"}'),
    _entry_answer(b'{"logprob": -1, "token": "token_id:1", "token": null}'),
    _entry_answer(b'{"logprob": -1, "token": null, "token": "token_id:4"}'),
    _entry_answer(b'{"logprob": -1, "token": 5, "token": "token_id:4"}'),
    _entry_answer(b'{"logprob": -1, "token": "token_id:4", "token": 5}'),
    _entry_answer(b'{"logprob": -1, "logprob": -2, "token": "token_id:4"}'),
    _entry_answer(b'{"logprob": "x", "logprob": -2, "token": "token_id:4"}'),
    # "token_ids" twice, null against a list, and odd lists
    _entry_answer(
        b'{"logprob": -1, "token": "token_id:4"}', b', "token_ids": [7], "token_ids": null'
    ),
    _entry_answer(
        b'{"logprob": -1, "token": "token_id:4"}', b', "token_ids": null, "token_ids": [7]'
    ),
    _entry_answer(b'{"logprob": -1, "token": 5}', b', "token_ids": [7], "token_ids": [8]'),
    _entry_answer(b'{"logprob": -1, "token": 5}', b', "token_ids": [7], "token_ids": null'),
    _entry_answer(b'{"logprob": -1, "token": 5}', b', "token_ids": null, "token_ids": [7]'),
    _entry_answer(b'{"logprob": -1, "token": "token_id:4"}', b', "token_ids": null'),
    _entry_answer(b'{"logprob": -1, "token": 5}', b', "token_ids": []'),
    _entry_answer(b'{"logprob": -1, "token": 5}', b', "token_ids": [true]'),
    _entry_answer(b'{"logprob": -1, "token": "token_id:4"}', b', "token_ids": [true]'),
    _entry_answer(b'{"logprob": -1, "token": "token_id:4"}', b', "token_ids": "x"'),
    # "choices" twice, and several choices
    b'{"choices": [{"logprobs": {"content": [{"logprob": -1, "token": "token_id:4"}]}}], '
    b'"choices": [{"logprobs": {"content": [{"logprob": -1, "token": "token_id:5"}]}}]' + _P,
    b'{"choices": [{"logprobs": {"content": [{"logprob": -1, "token": "token_id:4"}]}}], '
    b'"choices": []' + _P,
    b'{"choices": [], '
    b'"choices": [{"logprobs": {"content": [{"logprob": -1, "token": "token_id:4"}]}}]' + _P,
    b'{"choices": [{"logprobs": {"content": [{"logprob": -1, "token": "token_id:4"}]}}, '
    b'{"logprobs": {"content": [{"logprob": -1, "token": 5}]}}]' + _P,
    b'{"choices": [{"logprobs": {"content": [{"logprob": -1, "token": "token_id:4"}]}}, '
    b'{"logprobs": 7}]' + _P,
    b'{"choices": [{"logprobs": {"content": [{"logprob": -1, "token": "token_id:4"}]}}, '
    b'{"logprobs": {"content": [{"token": "x"}]}}]' + _P,
    b'{"choices": [{"logprobs": {"content": [{"logprob": -1, "token": "token_id:4"}]}}, 1]' + _P,
]

ESCAPED_KEYS = [
    _entry_answer(b'{"logprob": -1, "tok\\u0065n": "token_id:4"}'),
    b'{"choices": [{"logprobs": {"cont\\u0065nt": [{"logprob": -1, "token": "token_id:4"}]}}]' + _P,
    b'{"choices": [{"logpr\\u006fbs": {"content": [{"logprob": -1, "token": "token_id:4"}]}}]' + _P,
    b'{"ch\\u006fices": [{"logprobs": {"content": [{"logprob": -1, "token": "token_id:4"}]}}]' + _P,
    _entry_answer(b'{"logprob": -1, "token": "token_id:4", "tok\\u0065n": "token_id:5"}'),
    _entry_answer(b'{"logprob": -1, "tok\\u0065n": "token_id:5", "token": "token_id:4"}'),
    _entry_answer(b'{"logprob": -1, "token\\u0000": "token_id:5"}'),
    _entry_answer(b'{"logprob": -1, "Token": "token_id:5"}'),
    _entry_answer(b'{"logprob": -1, "token ": "token_id:5"}'),
    _entry_answer(b'{"logprob": -1, "token": "token_id:4"}', b', "token\\u005fids": [7]'),
]

_TOKENS = [
    b'"token_id:\\u0034"',
    b'"token_id:4\\n"',
    b'"token_id:4\\u0000"',
    b'"token_id:\xd9\xa7"',  # ARABIC-INDIC DIGIT SEVEN
    b'"token_id:\xef\xbc\x97"',  # FULLWIDTH DIGIT SEVEN
    b'"token_id:-4"',
    b'"token_id: 4"',
    b'"token_id:4 "',
    b'"TOKEN_ID:4"',
    b'"None"',
    b"null",
    b"true",
    b"7",
    b"1.5",
    b'["token_id:4"]',
    b'{"token": "token_id:4"}',
    b'"token_id:' + b"7" * 4300 + b'"',
    b'"token_id:' + b"7" * 4301 + b'"',
    b'"token_id:' + b"0" * 5000 + b'7"',
    b'"\\ud800"',
    b'"\\udc00"',
    b'"token_id:4\\ud800"',
    b'"\\ud800\\u0041"',
    b'"\\ud800\\ud800"',
    b'"\\udc00\\ud800"',
    b'"\\ud83d\\ude00"',
    b'"token_id:4\\ud83d\\ude00"',
    b'"\\q"',
    b'"\\u12"',
    b'"\\uZZZZ"',
    b'"\\U0041"',
    b'"\\x41"',
    b'"\\/"',
    b'"\x7f"',
    b'"\x00"',
    b'"\x1f"',
    b'"\xff"',
    b'"\xed\xa0\x80"',
    b'"\xc0\xaf"',
    b'"[' + b"[" * 250 + b'"',  # brackets inside a string: no nesting
    b"NaN",
    b"Infinity",
    b"1e999",
    b"01",
    b"[1,]",
    b"",
]
_TAILS = [b"", b', "token_ids": [7]', b', "token_ids": null', b', "token_ids": []']
TOKENS = [
    _entry_answer(b'{"logprob": -1, "token": ' + tok + b"}", tail)
    for tok in _TOKENS
    for tail in _TAILS
] + [
    _entry_answer(b'{"logprob": -1}, {"logprob": -1, "token": "token_id:3"}'),
    _entry_answer(b'{"logprob": -1, "token": "token_id:3"}, {"logprob": -1}'),
    _entry_answer(b'{"logprob": -1, "token": "token_id:3"}, {"logprob": -1, "token": 3}'),
    _entry_answer(b'{"logprob": -1, "token": "token_id:3"}, {"logprob": -1, "token": "x"}'),
    _entry_answer(b"", b', "token_ids": null'),
    _entry_answer(b'{"logprob": -1, "token": "token_id:3"}', b"} x"),
    b"\xef\xbb\xbf" + _entry_answer(b'{"logprob": -1, "token": "token_id:3"}'),
    _entry_answer(b'{"logprob": -1, "token": "token_id:3"}')[:-1] + b" \x0c}",
]


@pytest.mark.parametrize("content", DUPLICATES + ESCAPED_KEYS + TOKENS)
def test_the_token_decode_reads_as_the_reference_reads(content: bytes) -> None:
    assert outcome(read_chat, content) == outcome(reference, content), content[:300]


def test_duplicate_logprobs_take_the_fast_path_and_the_last_tokens() -> None:
    """Both decodes keep the last of a duplicated key, as ``jiter`` does: the ids are the
    last ``logprobs``' (never a mix of the first's logprobs with the last's tokens)."""
    content = (
        b'{"choices": [{"logprobs": {"content": [{"logprob": -1, "token": "token_id:1"}]}, '
        b'"logprobs": {"content": [{"logprob": -2, "token": "token_id:2"}, '
        b'{"logprob": -3, "token": "token_id:3"}]}}]' + _P
    )
    reply = chat_reply._read_plain(content)
    assert reply is not None
    assert reply.capture == ("tokens", [1], [2, 3], [-2.0, -3.0])
    assert outcome(read_chat, content) == outcome(reference, content)


_BIG = b"1" + b"0" * 4300
_UNREAD = {
    "an integer past 4,300 digits": _BIG,
    "nesting past 200 levels": b"[" * 300 + b"]" * 300,
}


@pytest.mark.parametrize("what", sorted(_UNREAD))
def test_the_stated_differences_reach_a_token_only_when_the_turn_does_not_read_it(
    what: str,
) -> None:
    """Since the tokens are skipped when the answer has ``token_ids``, the module's two
    stated differences reach the ``token`` field then (a field no turn keeps, as stated);
    without ``token_ids`` the token is read and both refuse it."""
    token = _UNREAD[what]
    read = _entry_answer(b'{"logprob": -1, "token": ' + token + b"}", b', "token_ids": null')
    assert outcome(read_chat, read) == outcome(reference, read)
    assert outcome(reference, read)[0] == "ValueError"
    unread = _entry_answer(b'{"logprob": -1, "token": ' + token + b"}", b', "token_ids": [7]')
    plain = _entry_answer(b'{"logprob": -1, "token": "x"}', b', "token_ids": [7]')
    assert outcome(reference, unread)[0] == "ValueError"
    assert outcome(read_chat, unread) == outcome(reference, plain)


# Generated raw JSON text: objects as lists of (key, value) pairs, so keys repeat.
def _obj(pairs: list[tuple[str, str]]) -> str:
    return "{" + ", ".join(f"{json.dumps(k)}: {v}" for k, v in pairs) + "}"


_TOKEN_TEXT = st.one_of(
    st.integers(0, 9).map(lambda i: json.dumps(f"token_id:{i}")),
    st.sampled_from(
        ["null", "7", "true", "[]", "{}", '"x"', '"token_id:\\u0033"', '"\\ud83d\\ude00"']
    ),
)
_LOGPROB_TEXT = st.sampled_from(["-1", "-0.5", "0", "-0", "true", "null", '"x"', "-1e400"])


@st.composite
def _entry(draw: st.DrawFn) -> str:
    """Mostly a plain entry (a valid logprob, a token), with repeated or odd keys now and
    then, so that many answers reach the token decode."""
    pairs = [("logprob", "-1"), ("token", draw(_TOKEN_TEXT))]
    if draw(st.integers(0, 2)) == 0:
        keys = st.sampled_from(["logprob", "token", "bytes", "tok\\u0065n"])
        for key in draw(st.lists(keys, max_size=3)):
            if key == "logprob":
                pairs.append((key, draw(_LOGPROB_TEXT)))
            elif key == "bytes":
                pairs.append((key, "[1, 2]"))
            else:
                pairs.append((key, draw(_TOKEN_TEXT)))
        draw(st.randoms()).shuffle(pairs)
    return "{" + ", ".join(f'"{k}": {v}' for k, v in pairs) + "}"


@st.composite
def _logprobs(draw: st.DrawFn) -> str:
    if draw(st.integers(0, 6)) == 0:
        return draw(st.sampled_from(["null", "{}", "[]", "1"]))
    kinds = st.sampled_from(["list", "list", "list", "null", "[]"])
    contents = draw(st.lists(kinds, min_size=1, max_size=3))
    pairs = []
    for kind in contents:
        if kind == "list":
            pairs.append(("content", "[" + ", ".join(draw(st.lists(_entry(), max_size=4))) + "]"))
        else:
            pairs.append(("content", kind))
    return _obj(pairs)


_IDS_TEXT = st.sampled_from(["null", "null", "[7]", "[7, 8]", "[]", "[true]", '"x"', "[1.0]"])


@st.composite
def _choice(draw: st.DrawFn) -> str:
    more = st.lists(st.sampled_from(["logprobs", "token_ids", "finish_reason"]), max_size=4)
    keys = ["logprobs", *draw(more)]
    draw(st.randoms()).shuffle(keys)
    pairs = []
    for key in keys:
        if key == "logprobs":
            pairs.append((key, draw(_logprobs())))
        elif key == "token_ids":
            pairs.append((key, draw(_IDS_TEXT)))
        else:
            pairs.append((key, '"stop"'))
    return _obj(pairs)


@st.composite
def _raw_answers(draw: st.DrawFn) -> bytes:
    pairs = []
    for _ in range(draw(st.integers(1, 2))):
        choices = draw(
            st.lists(_choice(), min_size=draw(st.sampled_from([0, 1, 1, 1])), max_size=2)
        )
        pairs.append(("choices", "[" + ", ".join(choices) + "]"))
    if draw(st.booleans()):
        pairs.append(("prompt_token_ids", draw(_IDS_TEXT)))
    draw(st.randoms()).shuffle(pairs)
    return _obj(pairs).encode()


@examples(2000)
def test_generated_answers_with_repeated_keys_read_as_the_reference_reads(examples: int) -> None:
    @settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(_raw_answers())
    def check(content: bytes) -> None:
        assert outcome(read_chat, content) == outcome(reference, content), content[:300]

    check()


def test_the_generated_answers_reach_the_token_decode() -> None:
    """The property above is not vacuous: a repeated-key answer reaches the second decode."""
    content = (
        b'{"choices": [{"token_ids": [7], "token_ids": null, "logprobs": {"content": null, '
        b'"content": [{"logprob": -1, "token": null, "token": "token_id:3"}]}}]' + _P
    )
    with pytest.MonkeyPatch.context() as monkeypatch:
        seen = count_token_decodes(monkeypatch)
        assert outcome(read_chat, content) == outcome(reference, content)
    assert seen == [content]
    assert chat_reply._read_plain(content) is not None
