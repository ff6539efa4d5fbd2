"""The sandbox's one rule for agent-written file names (``gymforge.sandbox.intake``, shared by
``swe`` and ``code-agent``): every name the sandbox puts in a job directory is reserved, and
``take_in`` keeps what a caller can hold, listing what it left out. (The accepted and refused
names themselves are tested in ``tests/envs/swe/test_swe_intake.py``.)"""

from __future__ import annotations

import pytest

from gymforge.sandbox import SandboxJob
from gymforge.sandbox.intake import RESERVED, entry_file, refusal, take_in
from gymforge.sandbox.landlock import SCRATCH
from gymforge.sandbox.languages import ARTEFACT, LANGUAGES


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_entry_files_are_reserved_and_keep_the_language_suffix(language: str) -> None:
    name = entry_file(language)
    main = LANGUAGES[language].main
    assert name.startswith(RESERVED) and name.endswith(main[main.rindex(".") :])
    assert refusal(name) is not None and refusal(main) is None
    # a workspace file named like the language's own main file sits next to the entry file
    SandboxJob(language=language, source="", files={main: "x"}, main_file=name)


def test_every_name_the_sandbox_puts_in_a_job_directory_is_refused() -> None:
    for name in (ARTEFACT, SCRATCH, f"{SCRATCH}/x", *(entry_file(lang) for lang in LANGUAGES)):
        assert name.startswith(RESERVED) and refusal(name) is not None, name


def test_take_in_keeps_acceptable_names_and_lists_the_rest() -> None:
    raw = {
        "ok.txt": b"1",
        "..oops": b"2",
        "bin.dat": bytes(range(256)),  # content is the caller's business
        "bad\udcffname": b"3",
        "a\nb": b"4",
        ".gf-entry.c": b"5",
        "cache.pyc": b"6",
    }
    got = take_in(raw, ignore=lambda p: p.endswith(".pyc"))
    assert got.files == {"ok.txt": b"1", "..oops": b"2", "bin.dat": bytes(range(256))}
    assert sorted(got.left_out) == sorted(["bad\\udcffname", "a\nb", ".gf-entry.c"])
    note = got.note() or ""
    assert note.startswith("files not kept: ") and "not valid UTF-8" in note
    assert "reserved for the sandbox" in note and "cache.pyc" not in note
    assert take_in({"x": b""}).note() is None


def test_a_long_list_of_left_out_names_is_cut() -> None:
    got = take_in({f".gf-{i:02d}": b"" for i in range(25)})
    assert got.files == {} and len(got.left_out) == 25
    assert (got.note() or "").endswith("; and 15 more")
