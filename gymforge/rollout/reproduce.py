"""Reproduce a run from its manifest and diff the result against the original.

Scripted policies are re-run as they were; any other policy (a model) is replaced by
``recorded:`` playback of the original actions, so the comparison isolates the environment.
Tasks come from the manifest's recorded ids; whether re-sampling still draws the same ids is
reported separately. Dataset hashes must match the manifest, or reproduction is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gymforge.core.errors import ConfigError
from gymforge.core.seeding import canonical_json
from gymforge.registry.handle import EnvHandle, open_env
from gymforge.rollout.executors import executor_for
from gymforge.rollout.manifest import manifest_spec, read_manifest
from gymforge.rollout.plan import draw_tasks, prepare
from gymforge.rollout.recorded_run import RecordedRun
from gymforge.rollout.replay import COMPARED
from gymforge.rollout.runner import run_sync
from gymforge.rollout.scripted import SCRIPTED
from gymforge.rollout.spec import RunSpec
from gymforge.trajectory.io import EpisodeLog, read_episodes, verify_chain
from gymforge.wording import plural

DIFFED = ("action", *COMPARED)


@dataclass
class ReproReport:
    compared: int = 0
    identical: int = 0
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    differences: list[str] = field(default_factory=list)
    sampling_matches: bool | None = None
    env_version: tuple[str, str] | None = None
    policy: str = ""
    command: str = "run"
    env: str = ""
    """The environment the reproduction ran on (``--env``, or the recorded id)."""
    dataset: str | None = None
    """The dataset file it loaded (found from the manifest, or ``--dataset``)."""
    results: list[str] = field(default_factory=list)
    """Differences in the command's own results (``eval.json``), filled in by the caller
    that recomputes them."""

    @property
    def ok(self) -> bool:
        clean = not (self.missing or self.extra or self.differences or self.results)
        return clean and bool(self.compared)

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, **self.__dict__}


def _episodes(path: Path) -> dict[tuple[str, int, int], EpisodeLog]:
    out = {}
    for log in read_episodes(path):
        verify_chain(log)
        s = log.steps[0]
        out[(s.task_id, s.seed, s.rollout)] = log
    return out


def episode_label(key: tuple[str, int, int]) -> str:
    """How a message names an episode by its job key (as ``Job.label`` does)."""
    task_id, seed, rollout = key
    return f"{task_id} seed {seed} rollout {rollout}"


def diff_runs(original: Path, new: Path, limit: int = 20) -> ReproReport:
    """Compare two trajectory files episode by episode, step by step (deterministic fields)."""
    a, b = _episodes(original), _episodes(new)
    report = ReproReport(
        missing=[episode_label(k) for k in sorted(a.keys() - b.keys())],
        extra=[episode_label(k) for k in sorted(b.keys() - a.keys())],
    )
    for key in sorted(a.keys() & b.keys()):
        report.compared += 1
        ra, rb = a[key].raw, b[key].raw
        diff = None
        if len(ra) != len(rb):
            diff = (
                f"{episode_label(key)}: {plural(len(ra) - 1, 'step')} recorded, {len(rb) - 1} now"
            )
        else:
            for x, y in zip(ra[:-1], rb[:-1], strict=True):
                name = next(
                    (f for f in DIFFED if canonical_json(x.get(f)) != canonical_json(y.get(f))),
                    None,
                )
                if name:
                    diff = f"{episode_label(key)}: step {x['step']} differs in {name!r}"
                    break
        if diff is None:
            report.identical += 1
        elif len(report.differences) < limit:
            report.differences.append(diff)
    return report


Redraw = Callable[[EnvHandle, RunSpec], list[str]]


def reproduce(
    manifest_path: str | Path,
    out: str | Path,
    *,
    redraw: Redraw | None = None,
    overwrite: bool = False,
    env: str | None = None,
    dataset: Path | None = None,
) -> ReproReport:
    """Re-run the run of ``manifest_path`` into ``out`` and diff the trajectories.

    ``redraw`` draws the tasks again the way the run's command did (default: ``run``'s
    ``draw_tasks``, for manifests that ``run`` wrote); ``sampling_matches`` reports whether
    it still draws the recorded ids. ``out`` must not hold a run unless ``overwrite``.
    ``env`` is the environment to run on, as the user names it; without it the manifest's
    ``run.env`` is used only if it is a built-in or installed id (``recorded_env``): a
    manifest from elsewhere never chooses the code that is imported. The dataset is the
    recorded one wherever it is now (``RecordedRun.dataset``), or ``dataset``; either way
    its hash must match the manifest's."""
    manifest_path, out = Path(manifest_path), Path(out)
    manifest = read_manifest(manifest_path)
    command = manifest.get("command", "run")
    spec = manifest_spec(manifest, manifest_path)
    original = manifest_path.parent / "trajectories.jsonl"
    if not original.exists():
        raise ConfigError(f"{original} is missing: reproduction diffs against it")
    recorded = RecordedRun(manifest_path, manifest)
    spec = spec.model_copy(update={"env": recorded.env(env, str(manifest_path))})
    dataset_file = recorded.dataset(dataset, str(manifest_path))
    handle = open_env(spec.env, dataset_file)
    pinned = {d["name"]: d["sha256"] for d in manifest.get("datasets", [])}
    for ds in handle.datasets:
        if pinned and ds.name not in pinned:
            raise ConfigError(
                f"the run used the dataset {', '.join(sorted(pinned))}, not {ds.name}: its task "
                f"ids carry the file's name, so pass it as {sorted(pinned)[0]}.jsonl"
            )
        if pinned.get(ds.name) != ds.content_hash:
            raise ConfigError(
                f"dataset {ds.name} changed: manifest sha256 {pinned.get(ds.name)}, "
                f"file now {ds.content_hash}"
            )
    replay_spec = spec
    if spec.policy not in SCRIPTED:
        replay_spec = spec.model_copy(update={"policy": f"recorded:{original}"})
    if out.resolve() == manifest_path.parent.resolve():
        raise ConfigError("--out must be a new directory, not the run being reproduced")
    draw = redraw or (draw_tasks if command == "run" else None)
    resampled = draw(handle, spec) if draw is not None and handle.tasks is not None else None
    replay_spec = replay_spec.model_copy(update={"tasks": list(manifest["tasks"]), "out": out})
    ready = prepare(
        replay_spec,
        handle=handle,
        guard=True,
        overwrite=overwrite,
        resumable=False,
        command=command,
        config=manifest.get("config"),
    )
    result = run_sync(ready.spec, executor_for(ready.spec, ready.handle, ready.source))
    report = diff_runs(original, out / "trajectories.jsonl")
    report.sampling_matches = resampled == manifest["tasks"] if resampled is not None else None
    report.policy = replay_spec.policy
    report.command = command
    report.env, report.dataset = spec.env, str(dataset_file) if dataset_file else None
    env_now = result.episodes[0]["env_version"] if result.episodes else None
    report.env_version = (manifest["env"]["version"], env_now or "?")
    return report
