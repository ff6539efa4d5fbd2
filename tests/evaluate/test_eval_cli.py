"""``gymforge eval``: every metric of the issue in eval.json, on a real held-out split."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eval_helpers import EVAL_ARGS, SKILL, run_cli

from gymforge.envs.ledger import LedgerEnv
from gymforge.evaluate.estimators import newcombe_interval
from gymforge.rollout.resolve import resolve_policy
from gymforge.rollout.skilled import SkilledPolicy, parse_skill


def load(eval_dir: Path) -> dict:
    return json.loads((eval_dir / "eval.json").read_text())


@pytest.mark.xdist_group("eval-runs")  # one worker: one eval_dir (conftest)
def test_eval_json_has_every_metric(eval_dir: Path) -> None:
    data = load(eval_dir)
    m = data["metrics"]
    assert data["kind"] == "eval" and data["policy"] == SKILL and data["env_version"] == "1.0.0"
    assert m["episodes"] == 16 * 4 and m["tasks"] == 16
    s = m["success"]
    assert s["lo"] <= s["rate"] <= s["hi"]
    assert set(m["pass@k"]) == set(m["pass^k"]) == {"1", "2", "4"}
    assert m["pass@k"]["1"] == pytest.approx(s["rate"])  # equal group sizes
    assert m["pass^k"]["4"] <= m["pass^k"]["2"] <= s["rate"] <= m["pass@k"]["2"]
    assert set(m["reward"]["components"]) == {"task", "step_cost"}
    assert m["reward"]["components"]["task"] == pytest.approx(s["rate"])
    eff = m["steps"]["efficiency"]
    assert eff["n"] == s["successes"] and 0 < eff["mean"] <= 1  # never shorter than oracle
    t = m["tools"]
    assert t["tool_calls"] > 0 and 0 < t["tool_error_rate"] < 1  # seeded faults
    assert set(t["per_tool"]) == {"search_customers", "list_accounts", "transfer"}
    assert m["truncation"]["rate"] == 0.0
    assert [r["key"] for r in m["by_family"]] == ["ledger.transfer"]
    assert {r["key"] for r in m["by_difficulty"]} <= {1, 2, 3}
    assert data["review"]["flagged"] == 0  # an honest policy
    assert data["failures"]["reasons"][0]["reason"] == "no_change"


@pytest.mark.xdist_group("eval-runs")  # one worker: one eval_dir (conftest)
def test_heldout_gap_is_computed_on_the_envs_real_split(eval_dir: Path) -> None:
    m = load(eval_dir)["metrics"]
    tasks = LedgerEnv.tasks
    for row in m["pass_rates"]:
        task = tasks.resolve(row["task_id"])
        # ledger holds out the three-transfer region; the record's split is the env's own
        assert row["split"] == task.split
        assert (task.params["transfers"] == 3) == (row["split"] == "heldout")
    by_split = {r["key"]: r["success"] for r in m["by_split"]}
    assert by_split["train"]["n"] == by_split["heldout"]["n"] == 8 * 4
    g = m["heldout_gap"]
    tr, ho = by_split["train"], by_split["heldout"]
    assert g["gap"] == pytest.approx(tr["rate"] - ho["rate"])
    assert (g["lo"], g["hi"]) == pytest.approx(
        newcombe_interval(tr["successes"], tr["n"], ho["successes"], ho["n"])
    )
    # the skilled policy is weakest at level 3, where all held-out tasks are
    assert g["gap"] > 0


@pytest.mark.xdist_group("eval-runs")  # one worker: one eval_dir (conftest)
def test_eval_writes_a_structured_failure_log(eval_dir: Path) -> None:
    data = load(eval_dir)
    rows = [json.loads(line) for line in (eval_dir / "failures.jsonl").read_text().splitlines()]
    assert len(rows) == data["metrics"]["episodes"] - data["metrics"]["success"]["successes"]
    assert {"episode_id", "task_id", "reason", "facts", "split", "steps"} <= set(rows[0])
    assert all(r["reason"] == "no_change" and r["facts"]["made"] == 0 for r in rows)


@pytest.mark.xdist_group("eval-runs")  # one worker: one eval_dir (conftest)
def test_eval_resume_runs_nothing_new_and_json_goes_to_stdout(eval_dir: Path) -> None:
    before = load(eval_dir)
    res = run_cli(
        *EVAL_ARGS,
        eval_dir,
        "--resume",
        "--json",
    )
    assert res.code == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["run"]["resumed"] == 64
    assert data["metrics"] == before["metrics"]


def test_eval_table_on_stderr(tmp_path: Path) -> None:
    res = run_cli("eval", "ledger", "--policy", "oracle", "-n", "3", "--out", tmp_path)
    assert res.code == 0 and res.stdout == ""
    for label in ("success [95% CI]", "pass@k", "pass^k", "held-out gap", "step efficiency"):
        assert label in res.stderr
    assert "evaluate with --split all" in res.stderr  # the gap says why it is n/a


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--split", "test"], "--split must be"),
        (["-k", "4", "--samples", "2"], "must be >= k"),
        (["--policy", "nonsense"], "unknown policy"),
        (["--policy", "skilled:x"], "bad skill"),
        (["--policy", "gymforge.nope:x"], "cannot import"),
    ],
)
def test_eval_user_errors(tmp_path: Path, args: list[str], fragment: str) -> None:
    base = ["eval", "ledger", "--policy", "oracle", "-n", "2", "--out", tmp_path]
    res = run_cli(*base, *args)
    assert res.code == 2 and res.stdout == "", res.stderr
    assert fragment in res.stderr and "Traceback" not in res.stderr


def test_policy_specs() -> None:
    assert parse_skill("0.3") == 0.3
    assert parse_skill("1=0.9,*=0.1") == {1: 0.9, None: 0.1}
    p = SkilledPolicy({1: 0.9, None: 0.1})
    assert p.probability("ledger.transfer/v1/d1/s5") == 0.9
    assert p.probability("ledger.transfer/v1/d3/s5") == 0.1
    assert p.probability("mydata@abc/3") == 0.1
    assert p.checkpoint == "skilled:1=0.9,*=0.1"
    assert resolve_policy("gymforge.rollout.scripted:NoopPolicy").factory().name == "noop"
    assert resolve_policy("oracle").factory().name == "oracle"
