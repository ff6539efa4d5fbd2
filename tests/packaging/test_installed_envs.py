"""Environments registered by installed packages (the ``gymforge.environments`` entry
points): listed with their package, run and QA'd by id; broken, doubly claimed and built-in
claims are refused with one line while the rest still list and run."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from budget import QUICK_QA
from package_site import REPO, Site

from gymforge.registry.installed import InstalledEnv, sort_entries

BROKEN = "import nonexistent_dependency_for_gymforge_tests\n"
WRONG_ID = (
    "from stockroom.env import StockroomEnv\n\n\n"
    "def make():\n    return StockroomEnv()  # its spec.id is stockroom, not shelf\n"
)


def rows(site: Site) -> dict[str, dict[str, Any]]:
    listed = site.gymforge("list", "--json")
    assert listed.returncode == 0, listed.stderr
    return {r["id"] + "@" + r["package"]: r for r in json.loads(listed.stdout)}


def test_installed_package_lists_runs_and_passes_qa(
    site: Site, install_stockroom: Callable[[], None], tmp_path: Path
) -> None:
    install_stockroom()
    found = rows(site)
    row = found["stockroom@stockroom"]
    assert row["source"] == "installed" and row["status"] == "ok", row
    assert (row["package_version"], row["version"]) == ("0.1.0", "0.1.0")
    assert row["families"] == ["stockroom.stock"] and row["entry_point"] == (
        "stockroom.env:StockroomEnv"
    )
    assert found["ledger@gymforge"]["source"] == "builtin"  # the built-ins beside it
    table = site.gymforge("list")
    assert "stockroom 0.1.0" in table.stderr and "gymforge 0.1.0" in table.stderr

    out = tmp_path / "run"
    ran = site.gymforge("run", "stockroom", "-n", "4", "--out", str(out), "--json")
    assert ran.returncode == 0, ran.stderr
    summary = json.loads(ran.stdout)
    assert summary["episodes"] == 4 and summary["success_rate"] == 1.0, summary
    first = json.loads((out / "trajectories.jsonl").read_text().splitlines()[0])
    assert first["env_id"] == "stockroom"

    # the default run's QA episodes (a third of qa's default; every check still runs)
    qa = site.gymforge("qa", "stockroom", "--episodes", str(QUICK_QA.episodes), "--json")
    assert qa.returncode == 0, qa.stderr[-3000:]
    report = json.loads(qa.stdout)
    assert report["env"] == "stockroom" and report["passed"]
    assert len(report["checks"]) == 10 and all(c["applicable"] for c in report["checks"])


def test_broken_entry_point_is_listed_and_the_others_still_run(
    site: Site, install_stockroom: Callable[[], None], tmp_path: Path
) -> None:
    install_stockroom()
    site.install("shelf-env", "2.0.1", {"shelf": "shelf_env:make"}, {"shelf_env.py": WRONG_ID})
    site.install("broken-env", "0.3.0", {"broken": "broken_env:Env"}, {"broken_env.py": BROKEN})
    found = rows(site)
    broken = found["broken@broken-env"]
    assert broken["status"] == "broken" and broken["package_version"] == "0.3.0"
    assert "ModuleNotFoundError" in broken["error"] and "nonexistent_dependency" in broken["error"]
    assert "\n" not in broken["error"]
    wrong = found["shelf@shelf-env"]
    assert wrong["status"] == "broken" and "spec.id is 'stockroom'" in wrong["error"]
    assert found["stockroom@stockroom"]["status"] == "ok"  # the others are listed all the same
    table = site.gymforge("list")
    assert table.returncode == 0 and "broken" in table.stderr

    ran = site.gymforge("run", "broken", "-n", "1", "--out", str(tmp_path / "b"))
    assert ran.returncode == 2 and "Traceback" not in ran.stderr
    assert "'broken' from broken-env 0.3.0 failed to import" in ran.stderr
    ok = site.gymforge("run", "stockroom", "-n", "2", "--out", str(tmp_path / "s"))
    assert ok.returncode == 0, ok.stderr


def test_two_packages_claiming_one_id_are_both_refused(
    site: Site, install_stockroom: Callable[[], None], tmp_path: Path
) -> None:
    install_stockroom()
    site.install("stockroom-fork", "9.9", {"stockroom": "stockroom.env:StockroomEnv"})
    found = rows(site)
    for key in ("stockroom@stockroom", "stockroom@stockroom-fork"):
        assert found[key]["status"] == "broken"
        assert "stockroom 0.1.0 and stockroom-fork 9.9" in found[key]["error"]
    ran = site.gymforge("qa", "stockroom", "--check", "heldout_exclusion")
    assert ran.returncode == 2 and "Traceback" not in ran.stderr
    assert "claimed by 2 packages: stockroom 0.1.0 and stockroom-fork 9.9" in ran.stderr


def test_a_package_claiming_a_builtin_id_is_refused(site: Site, tmp_path: Path) -> None:
    fake = "class Env:\n    pass\n"
    site.install("ledger-impostor", "1.0", {"ledger": "impostor:Env"}, {"impostor.py": fake})
    found = rows(site)
    refused = found["ledger@ledger-impostor"]
    assert refused["status"] == "broken" and "claims the built-in id 'ledger'" in refused["error"]
    assert found["ledger@gymforge"]["status"] == "ok"
    ran = site.gymforge("run", "ledger", "-n", "2", "--out", str(tmp_path / "l"), "--json")
    assert ran.returncode == 0, ran.stderr  # the built-in, not the impostor
    assert json.loads(ran.stdout)["success_rate"] == 1.0


def test_unknown_id_names_installed_ones(site: Site, install_stockroom: Callable[[], None]) -> None:
    install_stockroom()
    ran = site.gymforge("qa", "stockroon")
    assert ran.returncode == 2 and "installed: stockroom" in ran.stderr


def test_builtin_ids_never_scan_entry_points() -> None:
    code = (
        "from gymforge.registry import installed, resolve\n"
        "resolve.make_env('ledger')\n"
        "assert installed.installed.cache_info().currsize == 0, 'scanned'\n"
        "resolve.known_ids()\n"
        "assert installed.installed.cache_info().currsize == 1\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr


def _entry(env_id: str, package: str, value: str = "m:f") -> InstalledEnv:
    return InstalledEnv(env_id, value, package, "1.0")


def test_sort_entries_refuses_each_conflict_with_its_reason() -> None:
    scan = sort_entries(
        [
            _entry("mine", "a"),
            _entry("ledger", "b"),
            _entry("twice", "c"),
            _entry("twice", "d"),
            _entry("bad id!", "e"),
            _entry("novalue", "f", value="justamodule"),
        ],
        builtin={"ledger"},
    )
    assert list(scan.usable) == ["mine"]
    problems = {(e.id, e.package): e.problem for e in scan.refused}
    assert "built-in" in str(problems["ledger", "b"])
    assert "c 1.0 and d 1.0" in str(problems["twice", "c"]) == str(problems["twice", "d"])
    assert "not an environment id" in str(problems["bad id!", "e"])
    assert "not module:attr" in str(problems["novalue", "f"])
    assert [(e.id, e.package) for e in scan.all()][:2] == [("bad id!", "e"), ("ledger", "b")]


def test_eval_serve_and_the_python_api_take_installed_ids(
    site: Site, install_stockroom: Callable[[], None], tmp_path: Path
) -> None:
    install_stockroom()
    ev = site.gymforge("eval", "stockroom", "--policy", "oracle", "-n", "4", "--out", "ev")
    assert ev.returncode == 0, ev.stderr
    assert json.loads((site.root / "ev" / "eval.json").read_text())["env"] == "stockroom"
    made = subprocess.run(
        [sys.executable, "-c", "import gymforge; print(gymforge.make('stockroom').spec.id)"],
        env=site.env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.stdout.strip() == "stockroom", made.stderr
    with site.serve("stockroom", "--qa-hooks") as url:  # the oracle needs the QA hooks
        ran = site.gymforge("run", url, "-n", "3", "--out", str(tmp_path / "remote"), "--json")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["success_rate"] == 1.0
