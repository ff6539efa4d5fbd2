"""Task machinery: param-encoded ids, datasets pinned by hash, mixtures, curricula, and the
hard-negative pool — and that every training path refuses held-out tasks."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from gymforge.core.errors import ConfigError, UnknownTaskError
from gymforge.envs.ledger.env import FAMILY, LedgerEnv
from gymforge.tasks import (
    TRAINING_PATHS,
    Curriculum,
    HardNegativePool,
    Mixture,
    Split,
    TaskSource,
    load_jsonl,
    parse_task_id,
)
from gymforge.tasks.mixture import capped_shares

SOURCE = LedgerEnv.tasks


# ---- ids --------------------------------------------------------------------------------
@pytest.mark.parametrize("version", [1, 2])
def test_param_encoded_ids_roundtrip_and_resolve(version: int) -> None:
    """At the current version and at an older one (its ids name its own tasks)."""
    params = {"customers": 5, "fault_rate": 0.1, "transfers": 2}
    vid = FAMILY.at_version(version).variant_id(params, 42)
    assert vid == f"ledger.transfer/v{version}/d2/s42/customers=5,fault_rate=0.1,transfers=2"
    tid = parse_task_id(vid)
    assert (tid.family, tid.version, tid.difficulty, tid.seed, tid.params) == (
        "ledger.transfer",
        version,
        2,
        42,
        params,
    )
    assert str(tid) == vid
    a, b = SOURCE.resolve(vid), SOURCE.resolve(vid)
    assert a == b and a.params == params and a.task_id == vid


@pytest.mark.parametrize(
    "bad",
    [
        "ledger.transfer/v1/d2/s42/customers",  # no value
        "ledger.transfer/v1/d2/s42/customers=five",  # not JSON
        "ledger.transfer/v1/d1/s42/customers=5,fault_rate=0.1,transfers=2",  # wrong level
        "ledger.transfer/v1/d2/s42/customers=99,fault_rate=0.1,transfers=2",  # in no level
        "ledger.transfer/v3/d1/s1",  # a version never made
    ],
)
def test_bad_ids_are_refused(bad: str) -> None:
    with pytest.raises(UnknownTaskError):
        SOURCE.resolve(bad)


def test_nearby_seeds_share_no_tasks() -> None:
    """Each run draws from its own hash-derived stream: seed 1000 and 1500 share nothing."""
    a = set(SOURCE.sample(1000, 1000))
    b = set(SOURCE.sample(1000, 1500))
    assert len(a) > 990 and len(b) > 990
    assert len(a & b) <= 2


def test_duplicate_rate_is_bounded() -> None:
    tasks = [SOURCE.resolve(t) for t in SOURCE.sample(500, 3)]
    distinct = {(t.prompt, json.dumps(t.truth, sort_keys=True)) for t in tasks}
    assert 1 - len(distinct) / len(tasks) < 0.02


# ---- datasets ---------------------------------------------------------------------------
def write_rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_dataset_is_pinned_by_content_hash(tmp_path: Path) -> None:
    rows = [
        {"question": "1+1?", "answer": "2"},
        {"task_id": "gsm/7#b", "question": "2+2?", "answer": "4"},
    ]
    ds = load_jsonl(write_rows(tmp_path / "arith.jsonl", rows))
    again = load_jsonl(write_rows(tmp_path / "copy.jsonl", rows), name="arith")
    assert ds.content_hash == again.content_hash and ds.pin == again.pin
    assert ds.pin.startswith("arith@") and len(ds.pin) == len("arith@") + 12
    assert [t.task_id for t in ds] == [f"{ds.pin}/0", "gsm/7#b"]
    assert ds.resolve(f"{ds.pin}/1") == ds.resolve("gsm/7#b")
    changed = load_jsonl(
        write_rows(tmp_path / "arith.jsonl", [*rows[:1], {**rows[1], "answer": "5"}])
    )
    assert changed.content_hash != ds.content_hash
    assert ds.manifest()["sha256"] == ds.content_hash and ds.manifest()["rows"] == 2


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", ":2: not valid JSON"),
        ('{"question": "q"}', ":2: answer"),
        ('{"question": "", "answer": "1"}', ":2: question"),
        ('{"question": "q", "answer": "1", "task_id": "a"}', "duplicate task_id"),
    ],
)
def test_bad_dataset_lines_name_the_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"task_id": "a", "question": "q", "answer": "1"}\n' + line + "\n")
    with pytest.raises(ConfigError, match=message):
        load_jsonl(path)


def test_missing_and_empty_datasets(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_jsonl(tmp_path / "nope.jsonl")
    (tmp_path / "e.jsonl").write_text("\n\n")
    with pytest.raises(ConfigError, match="no rows"):
        load_jsonl(tmp_path / "e.jsonl")


def test_source_serves_datasets_and_holds_them_out(tmp_path: Path) -> None:
    ds = load_jsonl(
        write_rows(
            tmp_path / "qa.jsonl", [{"question": f"q{i}", "answer": str(i)} for i in range(20)]
        )
    )
    src = TaskSource(SOURCE.families, SOURCE.split).with_dataset(ds)
    assert src.resolve(f"{ds.pin}/3").prompt == "q3"
    drawn = src.sample(60, 0, "train")
    assert any(t.startswith(ds.pin) for t in drawn)
    held = TaskSource(SOURCE.families, Split(families=frozenset({"qa"}))).with_dataset(ds)
    assert not any(t.startswith(ds.pin) for t in held.sample(200, 0, "train"))
    assert all(held.resolve(t).split == "heldout" for t in held.sample(5, 0, "heldout"))
    with pytest.raises(UnknownTaskError, match="no loaded dataset"):
        src.resolve("nothing/like/this")


# ---- mixtures ---------------------------------------------------------------------------
def two_family_source() -> TaskSource:
    from gymforge.envs.ledger.env import TransferFamily

    other = TransferFamily("ledger.other", 1, FAMILY.levels)
    return TaskSource.of([FAMILY, other], SOURCE.split)


def test_balanced_mixture_keeps_every_quota_within_one() -> None:
    src = two_family_source()
    mix = Mixture(src, {"ledger.transfer": 3.0, "ledger.other": 1.0}, "balanced")
    ids = mix.sample(200, 1)
    for k in range(1, 201):
        c = Counter(parse_task_id(t).family for t in ids[:k])
        assert abs(c["ledger.transfer"] - 0.75 * k) <= 1
    assert ids == mix.sample(200, 1)


def test_weighted_mixture_and_max_share() -> None:
    src = two_family_source()
    ids = Mixture(src, {"ledger.transfer": 9.0, "ledger.other": 1.0}).sample(400, 2)
    share = Counter(parse_task_id(t).family for t in ids)["ledger.transfer"] / 400
    assert 0.84 < share < 0.96
    capped = Mixture(src, {"ledger.transfer": 9.0, "ledger.other": 1.0}, max_share=0.6)
    assert capped.shares == pytest.approx({"ledger.transfer": 0.6, "ledger.other": 0.4})
    assert capped_shares({"a": 10, "b": 1, "c": 1}, 0.5) == pytest.approx(
        {"a": 0.5, "b": 0.25, "c": 0.25}
    )
    with pytest.raises(ConfigError):
        capped_shares({"a": 1, "b": 1}, 0.4)


def test_mixture_refuses_unknown_and_heldout_families() -> None:
    with pytest.raises(ConfigError, match="unknown"):
        Mixture(SOURCE, {"nope": 1.0})
    held = TaskSource(two_family_source().families, Split(families=frozenset({"ledger.other"})))
    with pytest.raises(ConfigError, match="held-out"):
        Mixture(held, {"ledger.other": 1.0})
    ids = Mixture(held, {"ledger.transfer": 1.0}).sample(50, 0)
    assert all(held.resolve(t).split == "train" for t in ids)


# ---- curriculum -------------------------------------------------------------------------
def test_curriculum_moves_with_pass_rates_and_never_serves_heldout() -> None:
    cur = Curriculum(SOURCE, band=(0.3, 0.7), min_samples=4)
    assert cur.levels == {"ledger.transfer": 1}
    for task_id in cur.sample(4, 0):
        cur.record(task_id, True)
    assert cur.update() == {"ledger.transfer": (1, 2)}
    for task_id in cur.sample(4, 1):
        cur.record(task_id, True)
    assert cur.update() == {"ledger.transfer": (2, 3)}
    drawn = cur.sample(200, 2)
    assert {SOURCE.resolve(t).difficulty for t in drawn} == {3}
    assert all(SOURCE.resolve(t).split == "train" for t in drawn)
    for task_id in cur.sample(4, 3):
        cur.record(task_id, False)
    assert cur.update() == {"ledger.transfer": (3, 2)}
    for task_id in cur.sample(3, 4):
        cur.record(task_id, False)
    assert cur.update() == {}  # below min_samples: no move
    assert cur.state()["levels"] == {"ledger.transfer": 2}
    with pytest.raises(ConfigError):
        Curriculum(SOURCE, band=(0.8, 0.2))


# ---- hard negatives ---------------------------------------------------------------------
def test_pool_grows_from_failures_and_refuses_heldout(tmp_path: Path) -> None:
    db = tmp_path / "pool.sqlite"
    pool = HardNegativePool(SOURCE, db)
    train = SOURCE.sample(6, 0, "train")
    held = SOURCE.sample(3, 0, "heldout")
    for t in train[:4]:
        assert pool.record(t, False)
    assert pool.record(train[4], True)  # a success alone adds nothing
    for t in held:
        assert pool.record(t, False) is False
    assert pool.refused_heldout == 3 and len(pool) == 4
    pool.record(train[0], False)
    pool.record(train[0], True)
    assert dict((r[0], (r[1], r[2])) for r in pool.rows())[train[0]] == (3, 2)
    draws = pool.sample(300, 1)
    assert set(draws) <= set(train[:4]) and draws == pool.sample(300, 1)
    pool.close()
    reopened = HardNegativePool(SOURCE, db)  # persisted in SQLite
    assert len(reopened) == 4
    added = reopened.spawn_variants(top=2, seed=5)
    assert added and len(reopened) == 4 + len(added)
    for vid in added:
        task = SOURCE.resolve(vid)
        assert task.split == "train" and parse_task_id(vid).params is not None
    assert reopened.spawn_variants(top=2, seed=5) == []  # idempotent
    reopened.close()


def test_pool_variants_are_one_knob_away() -> None:
    pool = HardNegativePool(SOURCE)
    task_id = FAMILY.task_id(2, 11)
    base = SOURCE.resolve(task_id).params
    for vid in pool.variants(task_id, 0):
        params = parse_task_id(vid).params
        assert params is not None
        assert sum(params[k] != base[k] for k in base) == 1


@pytest.mark.parametrize("name", sorted(TRAINING_PATHS))
def test_every_training_path_refuses_heldout(name: str) -> None:
    ids = TRAINING_PATHS[name](SOURCE, 300, 7)
    assert ids, name
    assert all(SOURCE.resolve(t).split == "train" for t in ids)


def test_sample_visits_every_family_in_turn() -> None:
    """With no held-out rejections, n draws over k families give each exactly n/k (an even
    number of families once saw only every other family)."""
    from gymforge.envs.ledger.env import TransferFamily

    for k in (2, 3, 4, 5):
        fams = [TransferFamily(f"f{i}", 1, FAMILY.levels) for i in range(k)]
        ids = TaskSource.of(fams).sample(20 * k, 1)
        assert Counter(parse_task_id(t).family for t in ids) == {f"f{i}": 20 for i in range(k)}
