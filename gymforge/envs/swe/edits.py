"""The reference fix as editor-tool steps: the difference between two repositories, each
changed file as the smallest ``edit_file`` whose old text occurs exactly once before the edit
and not at all after it (so the edit cannot apply twice: a repeated insertion would
otherwise duplicate code)."""

from __future__ import annotations

from gymforge.envs.swe.truth import FixStep


def edits_between(old: dict[str, str], new: dict[str, str]) -> list[FixStep]:
    steps: list[FixStep] = []
    for path in sorted(old.keys() | new.keys()):
        if path not in new:
            steps.append(FixStep(op="delete", path=path))
        elif path not in old:
            steps.append(FixStep(op="create", path=path, new=new[path]))
        elif old[path] != new[path]:
            steps.append(_edit(path, old[path], new[path]))
    return steps


def _edit(path: str, before: str, after: str) -> FixStep:
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    p = 0
    while p < min(len(a), len(b)) and a[p] == b[p]:
        p += 1
    s = 0
    while s < min(len(a), len(b)) - p and a[-1 - s] == b[-1 - s]:
        s += 1
    lo, hi_a, hi_b = p, len(a) - s, len(b) - s
    while True:
        chunk = "".join(a[lo:hi_a])
        if chunk and before.count(chunk) == 1 and chunk not in after:
            return FixStep(op="edit", path=path, old=chunk, new="".join(b[lo:hi_b]))
        if lo == 0 and hi_a == len(a):
            return FixStep(op="edit", path=path, old=before, new=after)
        if lo > 0:
            lo -= 1
        if hi_a < len(a):
            hi_a += 1
            hi_b += 1
