"""Attack: spend the judge's time before the sandbox is even asked, in answer extraction.

The judge takes the last fenced code block of an answer. It found blocks with a regular
expression whose closing fence is a back-reference; on an answer of unclosed fences
(```` ```python ```` on every line) that search is quadratic and worse: 0.7 s for 10 KB, 12 s
for 40 KB, 50 s for 80 KB (about what a 16k-token reply holds), all of it judge time outside
every sandbox limit, and the policy chooses it. Success would mean the judge's work on an
answer grows faster than the answer. The defence: a line scan that looks at each line once
(asserted with a counter, not a clock) and finds exactly the blocks the expression found
(``tests/verify/test_code_extract.py`` checks that against the expression itself).
"""

from __future__ import annotations

from typing import Any

import pytest

from gymforge.verify.code import extract
from gymforge.verify.code.extract import extract_code

BOMBS = {
    "tagged": "```python\n" * 8000,
    "mixed": "".join("`" * (3 + i % 40) + "py\n" for i in range(8000)),
    "tildes": "~~~~\n```\n" * 4000,
}


class CountingPattern:
    def __init__(self, pattern: Any) -> None:
        self.pattern, self.calls = pattern, 0

    def match(self, s: str) -> Any:
        self.calls += 1
        return self.pattern.match(s)


@pytest.mark.parametrize("shape", sorted(BOMBS))
def test_extraction_looks_at_each_line_once(monkeypatch: pytest.MonkeyPatch, shape: str) -> None:
    counting = CountingPattern(extract._OPEN)
    monkeypatch.setattr(extract, "_OPEN", counting)
    answer = BOMBS[shape] + "```python\ndef f():\n    return 1\n```\n"
    code = extract_code(answer)
    assert counting.calls <= answer.count("\n"), counting.calls
    assert code.endswith("def f():\n    return 1\n")  # (the first opener's block, here)
