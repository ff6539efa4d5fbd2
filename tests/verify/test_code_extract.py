from gymforge.verify.code import extract_code


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
