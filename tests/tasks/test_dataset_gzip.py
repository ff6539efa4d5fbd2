"""Datasets as they are published: ``.jsonl.gz`` read wherever a dataset is read, pinned by
the hash of the decompressed content; bad rows named by file and line, good rows kept."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from gymforge.core.errors import ConfigError, UnknownTaskError
from gymforge.tasks import dataset as dsmod
from gymforge.tasks.dataset import load_jsonl

ROWS = [
    {"task_id": "a", "question": "1+1?", "answer": "2"},
    {"task_id": "b", "question": "2+2?", "answer": "4"},
]


def _write(path: Path, lines: list[str], gz: bool) -> Path:
    body = "".join(line + "\n" for line in lines).encode()
    path.write_bytes(gzip.compress(body, mtime=0) if gz else body)
    return path


def test_gzip_is_read_and_pins_the_decompressed_bytes(tmp_path: Path) -> None:
    lines = [json.dumps(r) for r in ROWS]
    plain = load_jsonl(_write(tmp_path / "m.jsonl", lines, gz=False))
    packed = load_jsonl(_write(tmp_path / "m.jsonl.gz", lines, gz=True))
    assert packed.content_hash == plain.content_hash
    assert packed.pin == plain.pin and packed.name == "m"
    assert [t.task_id for t in packed] == ["a", "b"]
    assert packed.resolve(f"{packed.pin}/1") is not None
    # detected by content, not by name
    odd = load_jsonl(_write(tmp_path / "odd.jsonl", lines, gz=True))
    assert odd.content_hash == plain.content_hash


def test_a_gzip_that_is_not_jsonl_names_each_bad_line(tmp_path: Path) -> None:
    p = _write(tmp_path / "t.jsonl.gz", ["id,question", "1,what?"], gz=True)
    with pytest.raises(ConfigError, match=r"^t\.jsonl\.gz:1: not valid JSON"):
        load_jsonl(p)
    with pytest.raises(ConfigError, match=r"has no rows: t\.jsonl\.gz:1: not valid JSON"):
        load_jsonl(p, strict=False)
    mixed = _write(tmp_path / "u.jsonl.gz", [json.dumps(ROWS[0]), "id,question"], gz=True)
    ds = load_jsonl(mixed, strict=False)
    assert len(ds) == 1 and len(ds.errors) == 1
    assert ds.errors[0].startswith("u.jsonl.gz:2: not valid JSON")
    assert "\n" not in ds.errors[0]


def test_a_broken_gzip_is_one_clear_error(tmp_path: Path) -> None:
    good = gzip.compress(b'{"question": "q", "answer": "a"}\n' * 50)
    (tmp_path / "cut.jsonl.gz").write_bytes(good[: len(good) // 2])
    with pytest.raises(ConfigError, match=r"^cut\.jsonl\.gz: not a readable gzip file"):
        load_jsonl(tmp_path / "cut.jsonl.gz")


def test_decompression_is_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dsmod, "MAX_DATASET_BYTES", 1000)
    p = _write(tmp_path / "big.jsonl.gz", [json.dumps(ROWS[0])] * 100, gz=True)
    with pytest.raises(ConfigError, match="more than 1000 bytes once decompressed"):
        load_jsonl(p)


def test_a_bad_row_loses_nothing_else_and_its_id_says_why(tmp_path: Path) -> None:
    lines = [
        json.dumps(ROWS[0]),
        json.dumps({"task_id": "broken", "question": "no answer"}),
        json.dumps(ROWS[1]),
    ]
    p = _write(tmp_path / "rows.jsonl", lines, gz=False)
    with pytest.raises(ConfigError, match=r"rows\.jsonl:2: answer"):
        load_jsonl(p)  # strict by default: nothing is half-loaded
    ds = load_jsonl(p, strict=False)
    assert [t.task_id for t in ds] == ["a", "b"]
    assert ds.errors == ["rows.jsonl:2: answer: Field required"]
    with pytest.raises(UnknownTaskError, match=r"'broken' did not load: rows\.jsonl:2: answer"):
        ds.resolve("broken")
    assert ds.resolve("elsewhere") is None
