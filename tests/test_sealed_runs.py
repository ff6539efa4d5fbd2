"""Sealed runs: keys, the keyed chain, run seals, interrupted and resumed runs, the CLI.

The attacks themselves (splice, drop, policy-text rewrite) live in ``tests/redteam``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gymforge.cli import app
from gymforge.core import IntegrityError, canonical_json
from gymforge.core.errors import InfraError, UserError
from gymforge.core.types import Observation
from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout import EpisodeContext, LocalExecutor, OraclePolicy, PolicyTurn, RunSpec, run
from gymforge.trajectory.check import check_file, looks_finished
from gymforge.trajectory.documents import check_documents, document_digests
from gymforge.trajectory.io import (
    TrajectoryWriter,
    read_episodes,
    recover_run,
    reseal,
    verify_chain,
)
from gymforge.trajectory.seal import KEY_ENV, key_id, load_key

KEY = b"a test seal key \x00\xff with any bytes"
JOBS = [(t, i) for i, t in enumerate(LedgerEnv.tasks.sample(5, 21, "train"))]


@pytest.fixture(autouse=True)
def _no_ambient_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def sealed_run(out: Path, jobs: list[tuple[str, int]] = JOBS, **kw: Any) -> Path:
    asyncio.run(
        run(
            RunSpec(env="ledger", policy="oracle", jobs=jobs, out=out, seal_key=KEY, **kw),
            LocalExecutor(LedgerEnv, OraclePolicy),
        )
    )
    return out / "trajectories.jsonl"


def cli(*args: str | Path, env: dict[str, str | None] | None = None) -> tuple[int, str]:
    out = CliRunner(env={"NO_COLOR": "1", KEY_ENV: None, **(env or {})}).invoke(
        app, [str(a) for a in args]
    )
    return out.exit_code, out.stderr


# ---- keys ---------------------------------------------------------------------------------
def test_the_key_is_the_file_bytes_or_the_environment_utf8(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert load_key() is None
    monkeypatch.setenv(KEY_ENV, "")
    assert load_key() is None  # empty: no key
    monkeypatch.setenv(KEY_ENV, "schlüssel")
    assert load_key() == "schlüssel".encode()
    key_file = tmp_path / "key"
    key_file.write_bytes(KEY + b"\n")
    assert load_key(key_file) == KEY + b"\n"  # exact bytes, the file wins over the env
    key_file.write_bytes(b"")
    with pytest.raises(UserError, match="is empty"):
        load_key(key_file)
    with pytest.raises(UserError, match="cannot read"):
        load_key(tmp_path / "missing")


# ---- the sealed file ----------------------------------------------------------------------
def test_every_line_is_sealed_and_a_run_seal_closes_the_file(tmp_path: Path) -> None:
    path = sealed_run(tmp_path)
    records = lines(path)
    assert all(len(r["seal"]) == 64 for r in records)
    end = records[-1]
    assert end["record"] == "run_seal" and end["episodes"] == 5
    assert end["records"] == len(records) - 1 and end["key_id"] == key_id(KEY)
    assert end["run_ids"] == [records[0]["run_id"]] and end["run_id"] == records[0]["run_id"]
    check = check_file(path, KEY)
    assert check.finished and check.run_seals == 1 and len(check.episodes) == 5
    # the unkeyed readers still work on a sealed file: run seals skipped, digests intact
    logs = read_episodes(path)
    assert len(logs) == 5
    for log in logs:
        verify_chain(log)


def test_a_sealed_file_without_the_key_or_with_another_key_is_refused(tmp_path: Path) -> None:
    path = sealed_run(tmp_path)
    with pytest.raises(IntegrityError, match=r"line 1 .*sealed .*needs the seal key"):
        check_file(path, None)
    with pytest.raises(IntegrityError, match=r"line 1 .*seal mismatch"):
        check_file(path, b"another key")


def test_a_file_sealed_with_another_key_says_so_at_its_run_seal(tmp_path: Path) -> None:
    """The first record of a file sealed with another key fails like an edit; a file
    holding only a run seal (a run with no episodes) names the other key."""
    asyncio.run(
        run(
            RunSpec(env="ledger", policy="oracle", jobs=[], out=tmp_path, seal_key=KEY),
            LocalExecutor(LedgerEnv, OraclePolicy),
        )
    )
    with pytest.raises(IntegrityError, match="sealed with another key"):
        check_file(tmp_path / "trajectories.jsonl", b"another key")


def test_the_unkeyed_chain_of_old_files_still_verifies(tmp_path: Path) -> None:
    asyncio.run(
        run(
            RunSpec(env="ledger", policy="oracle", jobs=JOBS, out=tmp_path),
            LocalExecutor(LedgerEnv, OraclePolicy),
        )
    )  # no key: the old format
    records = lines(tmp_path / "trajectories.jsonl")
    assert all("seal" not in r for r in records) and records[-1]["record"] == "episode"
    check = check_file(tmp_path / "trajectories.jsonl", None)
    assert check.finished and not check.sealed and len(check.episodes) == 5
    with pytest.raises(IntegrityError, match=r"line 1 .*not sealed"):
        check_file(tmp_path / "trajectories.jsonl", KEY)


def test_a_run_seal_that_miscounts_is_refused(tmp_path: Path) -> None:
    """Even a writer holding the key cannot close a file with a run seal that does not
    count what precedes it (here: re-sealed by someone with the key, one episode short)."""
    from gymforge.trajectory.line_encoding import encode_line

    path = sealed_run(tmp_path)
    records = lines(path)
    end = dict(records[-1], episodes=4)
    body = {k: v for k, v in end.items() if k not in ("digest", "seal")}
    _, _, line = encode_line("", body, KEY, records[-2]["seal"])
    path.write_text("".join(canonical_json(r) + "\n" for r in records[:-1]) + line + "\n")
    with pytest.raises(IntegrityError, match="episodes = 4 but the file holds 5"):
        check_file(path, KEY)


# ---- interrupted and resumed runs ---------------------------------------------------------
class DiesOnTask:
    """The oracle, until the named task: then a refused request, which stops the run."""

    name = checkpoint = "dies"
    scripted = True
    task = JOBS[3][0]

    def __init__(self) -> None:
        self.inner = OraclePolicy()

    async def start(self, ctx: EpisodeContext) -> None:
        self.ctx = ctx
        await self.inner.start(ctx)

    async def act(self, observation: Observation) -> PolicyTurn:
        if self.ctx.task_id == self.task:
            err = InfraError("the server refused the request")
            err.retryable = False
            raise err
        return await self.inner.act(observation)


def test_an_interrupted_run_is_unfinished_and_resuming_seals_it(tmp_path: Path) -> None:
    with pytest.raises(UserError):
        asyncio.run(
            run(
                RunSpec(env="ledger", policy="DiesOnTask", jobs=JOBS, out=tmp_path, seal_key=KEY),
                LocalExecutor(LedgerEnv, DiesOnTask),
            )
        )
    path = tmp_path / "trajectories.jsonl"
    check = check_file(path, KEY)
    assert not check.finished and len(check.episodes) == 3  # each sealed one by one
    assert "run_seal" not in {r["record"] for r in lines(path)}
    code, err = cli("verify-log", path, env={KEY_ENV: "a wrong key"})
    assert code == 1 and "seal mismatch" in err  # a wrong key is never just "unfinished"
    key_file = tmp_path / "key"
    key_file.write_bytes(KEY)
    code, err = cli("verify-log", path, "--seal-key-file", key_file)
    assert code == 3 and "log unfinished: 3 episodes" in err and "forged" not in err
    code, err = cli("replay", path, "--seal-key-file", key_file)
    assert code == 3 and "replay ok: 3 episodes" in err and "unfinished" in err, err
    result = asyncio.run(
        run(
            RunSpec(
                env="ledger", policy="oracle", jobs=JOBS, out=tmp_path, resume=True, seal_key=KEY
            ),
            LocalExecutor(LedgerEnv, OraclePolicy),
        )
    )
    assert result.summary["resumed"] == 3 and result.summary["episodes"] == 5
    check = check_file(path, KEY)
    assert check.finished and check.run_seals == 1 and len(check.episodes) == 5
    end = lines(path)[-1]
    assert end["episodes"] == 5 and len(end["run_ids"]) == 2  # covers both invocations
    code, err = cli("verify-log", tmp_path, "--seal-key-file", key_file)
    assert code == 0 and "sealed (HMAC-SHA256" in err, err


def test_resuming_a_finished_sealed_run_adds_a_run_seal_over_everything(tmp_path: Path) -> None:
    path = sealed_run(tmp_path, JOBS[:2])
    sealed_run(tmp_path, JOBS, resume=True)
    kinds = [r["record"] for r in lines(path)]
    assert kinds.count("run_seal") == 2 and kinds[-1] == "run_seal"
    check = check_file(path, KEY)
    assert check.finished and check.run_seals == 2 and len(check.episodes) == 5


def test_resume_refuses_to_mix_sealed_and_unsealed_records(tmp_path: Path) -> None:
    sealed = sealed_run(tmp_path / "sealed", JOBS[:2])
    with pytest.raises(UserError, match="sealed run; resuming it needs its key"):
        asyncio.run(
            run(
                RunSpec(env="ledger", policy="oracle", jobs=JOBS, out=sealed.parent, resume=True),
                LocalExecutor(LedgerEnv, OraclePolicy),
            )
        )
    asyncio.run(
        run(
            RunSpec(env="ledger", policy="oracle", jobs=JOBS[:2], out=tmp_path / "plain"),
            LocalExecutor(LedgerEnv, OraclePolicy),
        )
    )
    with pytest.raises(UserError, match="partly sealed"):
        sealed_run(tmp_path / "plain", JOBS, resume=True)


def test_resume_never_launders_a_forged_file(tmp_path: Path) -> None:
    path = sealed_run(tmp_path, JOBS[:3])
    records = lines(path)
    victim = next(r for r in records if r["record"] == "episode")
    victim["reward"] += 1.0  # an edit the writer must not extend and re-seal
    path.write_text("".join(canonical_json(r) + "\n" for r in records))
    with pytest.raises(IntegrityError, match="seal mismatch"):
        recover_run(path, KEY)


def test_a_torn_sealed_tail_is_cut_and_the_chain_continues(tmp_path: Path) -> None:
    with pytest.raises(UserError):
        asyncio.run(
            run(
                RunSpec(env="ledger", policy="DiesOnTask", jobs=JOBS, out=tmp_path, seal_key=KEY),
                LocalExecutor(LedgerEnv, DiesOnTask),
            )
        )
    path = tmp_path / "trajectories.jsonl"
    text = path.read_text()
    path.write_text(text + text.splitlines(keepends=True)[0][:40])  # a torn write
    kept, state = recover_run(path, KEY)
    assert len(kept) == 3 and state.episodes == 3 and path.read_text() == text
    assert state.seal == lines(path)[-1]["seal"]


# ---- the CLI ------------------------------------------------------------------------------
def test_cli_run_seals_with_a_key_file_and_verify_log_explains_itself(tmp_path: Path) -> None:
    key_file = tmp_path / "seal.key"
    key_file.write_bytes(KEY)
    args = ("run", "ledger", "-n", "2", "--out", tmp_path / "r", "--json")
    code, err = cli(*args, "--seal-key-file", key_file)
    assert code == 0, err
    assert lines(tmp_path / "r" / "trajectories.jsonl")[-1]["record"] == "run_seal"
    code, err = cli("verify-log", tmp_path / "r")
    assert code == 1 and "needs the seal key" in err and "Traceback" not in err
    code, err = cli("replay", tmp_path / "r")
    assert code == 1 and "needs the seal key" in err
    code, err = cli("replay", tmp_path / "r" / "trajectories.jsonl", "--seal-key-file", key_file)
    assert code == 0 and "replay ok: 2 episodes" in err, err
    code, err = cli("run", "ledger", "-n", "2", "--out", tmp_path / "plain")
    assert code == 0, err
    code, err = cli("verify-log", tmp_path / "plain")
    assert code == 0 and "accidental corruption only" in err, err


def test_export_with_a_key_refuses_forged_training_data(tmp_path: Path) -> None:
    path = sealed_run(tmp_path)
    key_file = tmp_path / "key"
    key_file.write_bytes(KEY)
    code, err = cli("export", tmp_path, "--format", "sft", "--seal-key-file", key_file)
    assert code == 0, err
    records = lines(path)
    step = next(r for r in records if r["record"] == "step" and r["step"] == 1)
    step["observation"]["rendered"][0]["content"] = "forged"
    path.write_text("".join(canonical_json(r) + "\n" for r in records))
    code, err = cli("export", tmp_path, "--format", "sft", "--seal-key-file", key_file)
    assert code == 1 and "seal mismatch" in err, err


def test_a_refused_episode_leaves_the_keyed_chain_untouched(tmp_path: Path) -> None:
    from gymforge.trajectory.io import TrajectoryWriter

    good = lines(sealed_run(tmp_path / "src", JOBS[:2]))
    first = [r for r in good if r.get("episode_id") == good[0]["episode_id"]]
    second = [r for r in good if r.get("episode_id") == good[-2]["episode_id"]]
    broken = [dict(r) for r in second]
    broken[-1]["steps"] = -1  # breaks the schema at the last record
    path = tmp_path / "out.jsonl"
    with TrajectoryWriter(path, key=KEY, config={}) as writer:
        writer.write_episode(first)
        with pytest.raises(IntegrityError, match="breaks the trajectory schema"):
            writer.write_episode(broken)
        writer.write_episode(second)
        writer.seal_run("r")
    check = check_file(path, KEY)
    assert check.finished and len(check.episodes) == 2


# ---- one final run seal, continued seals, sealed documents ---------------------------------
def test_a_resume_continues_the_last_run_seal_and_names_it(tmp_path: Path) -> None:
    path = sealed_run(tmp_path, JOBS[:2])
    first = lines(path)[-1]
    assert "previous_seal" not in first
    assert first["files"].keys() == {"summary.json"}  # the library runner writes no manifest
    sealed_run(tmp_path, JOBS, resume=True)
    seals = [r for r in lines(path) if r["record"] == "run_seal"]
    assert seals[0]["continued"] is True and "continued" not in seals[1]
    assert seals[1]["previous_seal"] == seals[0]["seal"]  # the rewritten one
    assert {k: v for k, v in seals[0].items() if k not in ("seal", "digest", "continued")} == {
        k: v for k, v in first.items() if k not in ("seal", "digest")
    }  # the same seal, only marked continued


def test_a_resume_that_writes_nothing_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    path = sealed_run(tmp_path, JOBS[:2])
    before = path.read_bytes()
    _, state = recover_run(path, KEY)
    assert state.trailing is not None
    TrajectoryWriter(path, append=True, key=KEY, state=state).close()
    assert path.read_bytes() == before and check_file(path, KEY).finished


def test_reseal_covers_a_new_document_and_refuses_an_unfinished_file(tmp_path: Path) -> None:
    path = sealed_run(tmp_path, JOBS[:2])
    (tmp_path / "eval.json").write_text('{"metrics": {}}\n')
    assert reseal(path, KEY, document_digests(tmp_path))
    check = check_file(path, KEY)
    assert check.finished and check.files is not None and "eval.json" in check.files
    assert all(d.trusted for d in check_documents(tmp_path, check))

    cut = tmp_path / "cut"
    cut.mkdir()
    text = path.read_text().splitlines(keepends=True)
    (cut / "trajectories.jsonl").write_text("".join(text[:-1]))  # ends at a continued seal
    before = (cut / "trajectories.jsonl").read_bytes()
    assert not check_file(cut / "trajectories.jsonl", KEY).finished
    assert not reseal(cut / "trajectories.jsonl", KEY, {})
    assert (cut / "trajectories.jsonl").read_bytes() == before


def test_looks_finished_reads_the_structure_only(tmp_path: Path) -> None:
    path = sealed_run(tmp_path, JOBS[:2])
    assert looks_finished(path)
    text = path.read_text().splitlines(keepends=True)
    path.write_text("".join(text[:-1]))
    assert not looks_finished(path)
    plain = tmp_path / "plain.jsonl"
    plain.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "seal"}) + "\n"
                             for r in lines(path)))  # fmt: skip
    assert looks_finished(plain)  # nothing marks the end of an unsealed file
