"""Whole-dataset passes: every row once in file order, epochs, sampling without replacement."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from wf_helpers import cli, episodes, math_rows, write_jsonl

from gymforge.registry.handle import open_env
from gymforge.rollout.jobs import epoch_jobs


def rows_of(run_dir: Path) -> list[int]:
    return [int(e["task_id"].rsplit("/", 1)[1]) for e in episodes(run_dir)]


def test_a_ten_row_dataset_runs_ten_distinct_rows_in_file_order(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "ten.jsonl", math_rows(10))
    res = cli("run", "math", "--dataset", data, "-p", "oracle", "--out", tmp_path / "all")
    assert res.code == 0, res.stderr
    assert "every train row" in res.stderr and "10 rows" in res.stderr
    assert rows_of(tmp_path / "all") == list(range(10))
    assert all(e["success"] for e in episodes(tmp_path / "all"))
    manifest = json.loads((tmp_path / "all" / "manifest.json").read_text())
    assert manifest["run"]["n"] is None and len(manifest["tasks"]) == 10


def test_n_samples_rows_without_replacement_and_says_so(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "ten.jsonl", math_rows(10))
    res = cli("run", "math", "--dataset", data, "-n", "10", "--out", tmp_path / "n10")
    assert res.code == 0, res.stderr
    assert "without replacement" in res.stderr
    assert sorted(rows_of(tmp_path / "n10")) == list(range(10))
    res = cli("run", "math", "--dataset", data, "-n", "4", "--seed", "3", "--out", tmp_path / "n4")
    assert res.code == 0, res.stderr
    four = rows_of(tmp_path / "n4")
    assert len(set(four)) == 4
    # a larger -n extends the smaller sample, so a resumed run can grow
    res = cli("run", "math", "--dataset", data, "-n", "6", "--seed", "3", "--out", tmp_path / "n4")
    assert res.code == 2  # without --resume
    res = cli(
        "run", "math", "--dataset", data, "-n", "6", "-s", "3", "--out", tmp_path / "n4", "--resume"
    )
    assert res.code == 0, res.stderr
    six = rows_of(tmp_path / "n4")
    assert six[:4] == four and len(set(six)) == 6


def test_n_above_the_row_count_is_an_error_naming_the_count(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "ten.jsonl", math_rows(10))
    res = cli("run", "math", "--dataset", data, "-n", "11", "--out", tmp_path / "x")
    assert res.code == 2
    assert len(res.error_lines) == 1 and "the 10 train rows" in res.error_lines[0], res.stderr
    assert not (tmp_path / "x" / "trajectories.jsonl").exists()


def test_epochs_continue_the_rollout_indices(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "three.jsonl", math_rows(3))
    out = tmp_path / "ep"
    args = ["run", "math", "--dataset", data, "-g", "2", "--epochs", "2", "-p", "random"]
    res = cli(*args, "--out", out)
    assert res.code == 0, res.stderr
    eps = episodes(out)
    keys = [(e["task_id"], e["rollout"]) for e in eps]
    assert len(keys) == 12 and len(set(keys)) == 12
    assert Counter(e["rollout"] for e in eps) == {0: 3, 1: 3, 2: 3, 3: 3}
    assert [e["rollout"] for e in eps[:6]] == [0, 1, 0, 1, 0, 1]  # epoch 0 first, in file order
    # resuming the finished run adds nothing; a third epoch adds rollouts 4 and 5 only
    assert cli(*args, "--out", out, "--resume").code == 0
    assert len(episodes(out)) == 12
    more = ["run", "math", "--dataset", data, "-g", "2", "--epochs", "3", "-p", "random"]
    assert cli(*more, "--out", out, "--resume").code == 0
    eps = episodes(out)
    assert len(eps) == 18 and Counter(e["rollout"] for e in eps[12:]) == {4: 3, 5: 3}
    res = cli(*args, "--out", out, "--resume")
    assert res.code == 2 and "epochs: was 3, now 2 (epochs may grow, not shrink)" in res.stderr


def test_epoch_jobs_layout() -> None:
    jobs = epoch_jobs(["a", "b"], 7, group=2, epochs=2)
    assert [(j.task_id, j.rollout) for j in jobs] == [
        ("a", 0), ("a", 1), ("b", 0), ("b", 1), ("a", 2), ("a", 3), ("b", 2), ("b", 3)
    ]  # fmt: skip
    assert [j.index for j in jobs] == list(range(8)) and {j.seed for j in jobs} == {7}


def test_a_split_column_holds_rows_out(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "s.jsonl", math_rows(6, {1: "heldout", 4: "heldout"}))
    handle = open_env("math", data)
    assert handle.tasks is not None
    train = handle.tasks.dataset_rows("train", None)
    held = handle.tasks.dataset_rows("heldout", None)
    assert [t.rsplit("/", 1)[1] for t in train] == ["0", "2", "3", "5"]
    assert [t.rsplit("/", 1)[1] for t in held] == ["1", "4"]
    assert handle.tasks.resolve(held[0]).split == "heldout"
    drawn = handle.tasks.sample(20, 0, "train", families=[handle.datasets[0].name])
    assert set(drawn) <= set(train)  # training paths never see held-out rows
    res = cli("run", "math", "--dataset", data, "--out", tmp_path / "train")
    assert res.code == 0 and sorted(rows_of(tmp_path / "train")) == [0, 2, 3, 5]
    bad = write_jsonl(tmp_path / "bad.jsonl", [{**math_rows(1)[0], "split": "test"}])
    res = cli("run", "math", "--dataset", bad, "--out", tmp_path / "bad")
    assert res.code == 2 and "bad.jsonl:1: split: must be train or heldout" in res.stderr


def test_eval_and_calibrate_default_to_the_whole_dataset(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "s.jsonl", math_rows(6, {1: "heldout", 4: "heldout"}))
    res = cli(
        "eval", "math", "-p", "oracle", "--dataset", data, "--split", "all", "--out", tmp_path / "e"
    )
    assert res.code == 0, res.stderr
    ev = json.loads((tmp_path / "e" / "eval.json").read_text())
    assert ev["metrics"]["tasks"] == 6 and ev["config"]["n"] == 6
    assert ev["metrics"]["heldout_gap"]["gap"] == 0.0  # both splits present and scored
    assert "--split all" not in json.dumps(ev["metrics"]["heldout_gap"])
    res = cli(
        "calibrate", "math", "-p", "oracle", "-K", "2", "--dataset", data, "--out", tmp_path / "c"
    )
    assert res.code == 0, res.stderr
    cal = json.loads((tmp_path / "c" / "calibration.json").read_text())
    assert sorted(rows_of(tmp_path / "c")) == [0, 0, 2, 2, 3, 3, 5, 5]
    assert cal["config"]["n"] == 4


def test_eval_with_split_all_does_not_tell_the_user_to_pass_it(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "t.jsonl", math_rows(3))  # no held-out rows at all
    out = tmp_path / "e"
    res = cli("eval", "math", "-p", "oracle", "--dataset", data, "--split", "all", "--out", out)
    assert res.code == 0, res.stderr
    gap = json.loads((out / "eval.json").read_text())["metrics"]["heldout_gap"]
    assert gap["gap"] is None and gap["reason"] == "no held-out episodes in this run"
    res = cli("eval", "math", "-p", "oracle", "--dataset", data, "--out", tmp_path / "train")
    gap = json.loads((tmp_path / "train" / "eval.json").read_text())["metrics"]["heldout_gap"]
    assert gap["reason"].endswith("(evaluate with --split all)")
