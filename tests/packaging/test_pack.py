"""``gymforge pack DIR``: QA first, then a wheel and an sdist (PyPI's ``build``) that carry the
QA report, read back by ``gymforge qa ENV --show-embedded`` and ``gymforge list``."""

from __future__ import annotations

import json
import tarfile
import zipfile
from pathlib import Path

from package_site import Site

# A verifier that any non-empty reply satisfies: the red-team check must catch it.
GAMEABLE = ("passed = reply.strip() == answer", "passed = bool(reply.strip())")


def pack(site: Site, package: Path, *extra: str) -> tuple[int, str, str]:
    done = site.gymforge("pack", str(package), "--no-isolation", "-e", "8", *extra)
    return done.returncode, done.stdout, done.stderr


def test_pack_builds_wheel_and_sdist_with_the_qa_report_inside(site: Site, stockroom: Path) -> None:
    code, out, err = pack(site, stockroom)
    assert code == 0, err[-3000:]
    built = json.loads(out)
    wheel, sdist = Path(built["wheel"]), Path(built["sdist"])
    assert built["envs"] == ["stockroom"]
    assert wheel.parent == stockroom / "dist" and wheel.name == "stockroom-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as z:
        embedded = json.loads(z.read("stockroom/stockroom.qa.json"))
        entry_points = z.read("stockroom-0.1.0.dist-info/entry_points.txt").decode()
        z.extractall(site.root)  # what pip does with a pure-Python wheel
    assert (
        "[gymforge.environments]" in entry_points and "stockroom.env:StockroomEnv" in entry_points
    )
    assert (embedded["env"], embedded["package"], embedded["package_version"]) == (
        "stockroom",
        "stockroom",
        "0.1.0",
    )
    report = embedded["report"]
    assert report["passed"] and len(report["checks"]) == 10
    assert {"__init__.py", "env.py"} <= set(embedded["sources"])  # tied to the files QA ran on
    with tarfile.open(sdist) as t:
        assert "stockroom-0.1.0/stockroom/stockroom.qa.json" in t.getnames()
    assert not (stockroom / "stockroom" / "stockroom.qa.json").exists()  # source tree clean

    shown = site.gymforge("qa", "stockroom", "--show-embedded")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout) == embedded
    assert "embedded QA 10/10 passed" in shown.stderr
    listed = {r["id"]: r for r in json.loads(site.gymforge("list", "--json").stdout)}
    assert listed["stockroom"]["qa"].startswith("10/10 passed, env 0.1.0")
    assert listed["ledger"]["package"] == "gymforge"


def test_pack_refuses_an_environment_that_fails_qa(site: Site, stockroom: Path) -> None:
    env_file = stockroom / "stockroom" / "env.py"
    env_file.write_text(env_file.read_text().replace(*GAMEABLE))
    code, out, err = pack(site, stockroom)
    assert code == 2 and out == "", err[-2000:]
    assert "stockroom failed QA (" in err and "verifier_redteam" in err and "not packed" in err
    assert not (stockroom / "dist").exists()
    assert not (stockroom / "stockroom" / "stockroom.qa.json").exists()

    code, out, err = pack(site, stockroom, "--allow-failed")  # built, and the report says so
    assert code == 0, err[-2000:]
    with zipfile.ZipFile(json.loads(out)["wheel"]) as z:
        z.extractall(site.root)
    shown = site.gymforge("qa", "stockroom", "--show-embedded")
    assert shown.returncode == 1 and not json.loads(shown.stdout)["report"]["passed"]
    assert "failed: " in shown.stderr and "verifier_redteam" in shown.stderr


def test_pack_says_which_package_data_to_declare(site: Site, stockroom: Path) -> None:
    pyproject = stockroom / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(', "*.qa.json"]', "]"))
    code, _, err = pack(site, stockroom)
    assert code == 2
    assert "lacks the QA report stockroom/stockroom.qa.json" in err
    assert '[tool.setuptools.package-data] stockroom = ["*.qa.json"]' in err


def test_pack_needs_a_package_with_an_entry_point(site: Site, tmp_path: Path) -> None:
    code, _, err = pack(site, tmp_path)
    assert code == 2 and "has no pyproject.toml" in err
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "1"\n')
    code, _, err = pack(site, tmp_path)
    assert code == 2 and 'add [project.entry-points."gymforge.environments"]' in err
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\nversion = "1"\n'
        '[project.entry-points."gymforge.environments"]\nx = "nowhere.env:X"\n'
    )
    code, _, err = pack(site, tmp_path)
    assert code == 2 and "no module 'nowhere.env'" in err


def test_show_embedded_without_a_packed_build(site: Site, stockroom: Path) -> None:
    site.install(
        "stockroom", "0.1.0", {"stockroom": "stockroom.env:StockroomEnv"}, source=stockroom
    )
    shown = site.gymforge("qa", "stockroom", "--show-embedded")
    assert shown.returncode == 2 and "was not built by gymforge pack" in shown.stderr
    builtin = site.gymforge("qa", "ledger", "--show-embedded")
    assert builtin.returncode == 2 and "not an installed package's environment" in builtin.stderr
