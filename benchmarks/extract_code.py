"""Judge time spent extracting the code from an answer of unclosed fences (a reply the policy
chooses), for the line scan the judge uses next to the back-referencing regular expression
it replaced, measured in the same run on the same answers.

Answers: ```` ```python ```` on every line, ``--sizes`` lines each (10 bytes a line; a
16k-token reply holds about 8,000). Prints seconds per extraction for both and their ratio.

    .venv/bin/python benchmarks/extract_code.py [--sizes 1000,2000,4000]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gymforge.verify.code.extract import fenced_blocks  # noqa: E402

REFERENCE = re.compile(
    r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+#.-]*)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.S | re.M
)


def seconds(fn: object, text: str) -> float:
    t = time.perf_counter()
    fn(text)  # type: ignore[operator]
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,2000,4000")
    args = ap.parse_args()
    print(f"{'lines':>7} {'bytes':>8} {'regex s':>9} {'scan s':>9} {'ratio':>8}")
    for n in (int(x) for x in args.sizes.split(",")):
        text = "```python\n" * n
        old = seconds(REFERENCE.findall, text)
        new = seconds(fenced_blocks, text)
        print(f"{n:>7} {len(text):>8} {old:>9.3f} {new:>9.4f} {old / max(new, 1e-9):>8.0f}")


if __name__ == "__main__":
    main()
