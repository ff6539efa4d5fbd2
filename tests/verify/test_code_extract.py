import random
import re

from gymforge.verify.code import extract_code
from gymforge.verify.code.extract import fenced_blocks


def test_last_block_for_the_language() -> None:
    text = "```python\nx = 1\n```\ntext\n```python\nx = 2\n```\n```cpp\nint x;\n```"
    assert extract_code(text) == "x = 2\n"
    assert extract_code(text, "cpp") == "int x;\n"
    assert extract_code("```\nuntagged\n```") == "untagged\n"
    assert extract_code("```py\nshort\n```") == "short\n"


def test_whole_answer_without_fences() -> None:
    assert extract_code("def f():\n    return 1\n") == "def f():\n    return 1\n"


def test_other_language_block_never_counts_and_unterminated_fence() -> None:
    assert extract_code("```cpp\nint x;\n```", "python") == "```cpp\nint x;\n```"
    assert extract_code("Here:\n```python\nx = 3\n") == "x = 3\n"


# The judge's earlier extraction, a regular expression with a back-reference: the reference
# semantics (it was quadratic in unclosed fences, so the judge now scans lines instead).
REFERENCE = re.compile(
    r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+#.-]*)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.S | re.M
)
LINES = [
    "```", "```python", "``` py", "````", "````cpp", "~~~", "~~~python", "  ```", "```\t",
    "x = 1", "", "text ```", "``` ", "`````", "```js x", "\t~~~~", "```\r", "```python {.a}",
]  # fmt: skip


def test_the_line_scan_finds_exactly_the_blocks_the_reference_expression_finds() -> None:
    rng = random.Random(20261201)
    for _ in range(5000):
        text = "\n".join(rng.choice(LINES) for _ in range(rng.randint(0, 12)))
        text += "\n" if rng.random() < 0.5 else ""
        expected = [(tag, body) for _, tag, body in REFERENCE.findall(text)]
        assert fenced_blocks(text) == expected, text
