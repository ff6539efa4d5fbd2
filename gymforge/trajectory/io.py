"""Writing and reading trajectory files (JSONL), with validation and the digest chain.

The writer validates every record against the schema models, seals each episode's digest
chain, and writes a whole episode with one ``write`` followed by ``flush`` and ``fsync``:
a run killed midway keeps every finished episode, and never leaves half of one.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from gymforge.core.errors import POLICY_STOP_REASONS, IntegrityError, UserError
from gymforge.core.seeding import canonical_json
from gymforge.trajectory import fast_json
from gymforge.trajectory.same_json import same_json
from gymforge.trajectory.schema import (
    LINE_ADAPTER,
    AnyLine,
    EpisodeRecord,
    PolicyRecord,
    RunSealRecord,
    StepRecord,
    chain_digest,
    chain_step,
    component_totals,
    unsealed_json,
)
from gymforge.trajectory.seal import (
    NEED_KEY,
    ChainState,
    bad_seal,
    check_run_seal,
    passed_run_seal,
    record_label,
    seal_step,
)
from gymforge.trajectory.twin import TWIN, lift_numbers, shallow_action
from gymforge.wording import plural

_PLACEHOLDER = "0" * 64
_EPISODE_LINES = ("step", "episode")


def _none_defaults(model: type[PolicyRecord]) -> dict[str, None]:
    """``model``'s fields that default to None and validate an explicit None alike."""
    out: dict[str, None] = {}
    for name, spec in model.model_fields.items():
        if spec.is_required() or spec.default is not None:
            continue
        try:
            model.model_validate({"capture_level": "none", name: None})
        except ValidationError:
            continue
        out[name] = None
    return out


_POLICY_UNSET = _none_defaults(PolicyRecord)
"""A step's policy record fields that default to None: a record that leaves them out
(``model_turns``, of every policy but a harness) validates and dumps as one that sets them
to None, so the text the writer validates can be the line it writes (``same_json``)."""


def seal_episode(records: list[dict[str, Any]]) -> list[str]:
    """Validate ``records`` (steps then the episode record), chain their digests, and return
    the canonical JSON lines. Raises IntegrityError naming the first invalid record.

    Records are serialised to strict JSON *before* validation, so values JSON cannot hold
    (NaN, infinities, sets, objects) are refused rather than quietly turned into ``null`` or
    lists."""
    return _seal_lines(records, None, ChainState())


def _seal_lines(records: list[dict[str, Any]], key: bytes | None, state: ChainState) -> list[str]:
    """``seal_episode``, also sealing each line with ``key`` (when given) onto the keyed
    chain ``state`` of the file, which is advanced past the episode."""
    lines: list[str] = []
    counted: list[tuple[str, str, str]] = []
    previous = ""
    seal = state.seal  # the keyed chain runs on from the file's last line
    for i, rec in enumerate(records):
        marked = {**rec, "digest": _PLACEHOLDER}
        if type(rec.get("policy")) is dict:  # its unset fields, as the validated dump has them
            marked["policy"] = {**_POLICY_UNSET, **rec["policy"]}
        # sealed: the seal's slot is in the text too, so the line can be this text
        slotted = key is not None and "seal" not in rec and rec.get("record") in _EPISODE_LINES
        if slotted:
            marked["seal"] = _SEAL_PLACEHOLDER
        checked = _fast_checked(marked, slotted) or _checked(i, rec, marked, slotted)
        text, kind, body, same = checked
        if kind == "run_seal":
            raise IntegrityError(f"record {i}: a run seal is not part of an episode")
        # the validated record is nearly always the record again: then its text is `text`
        full = text if (key is None or slotted) and same else None
        body.pop("seal", None)
        previous, seal, line = _encode(previous, body, key, seal, full)
        lines.append(line)
        if key is not None:
            counted.append((body["record"], body["run_id"], seal))
    if key is not None:  # only once every record sealed: a refused episode leaves no trace
        for kind, run_id, line_seal in counted:
            state.count(kind, run_id, line_seal)
    return lines


_Checked = tuple[str, str, dict[str, Any], bool]
"""A record's canonical text (placeholders in), its kind (``record``), the validated
model's dump (``seal`` only when slotted) and whether the text is the dump's canonical
JSON."""


def _fast_checked(marked: dict[str, Any], slotted: bool) -> _Checked | None:
    """``_checked`` at C speed where that changes nothing, else None (the caller then takes
    ``_checked``, whose errors and bytes are the ones the writer has always had).

    ``marked`` is encoded by orjson and validated by the schema's twin (``twin.TWIN``: the
    same fields and constraints, returning the models' dump as plain dicts, accepting
    nothing the models refuse), and the dump is compared with ``==`` (in C): equal,
    ``marked`` holds no NaN or infinity (orjson wrote ``null``, which parses to nothing
    equal to either) and no value ``json`` refuses (a datetime, a dataclass or a plain enum
    equals no str or dict; orjson refuses the first two, and subclasses of the builtins,
    whose ``__eq__`` or ``items()`` could lie: ``fast_json._PLAIN``), so
    ``canonical_json(marked)`` would not have raised and the record is refused exactly when
    it always was. The text returned is then the dump's own
    canonical JSON (``fast_canonical`` of a dump, a plain JSON tree): the line the reference
    path writes whenever the dump differs from the record only in what ``==`` cannot see
    (``1`` and ``1.0``, ``0.0`` and ``-0.0``) as well as when it is the record again.

    That text is nearly always the text validated: the dump, encoded with its keys as they
    are (the twin's fields are sorted, and free-form dicts keep the sorted text's order), is
    the sorted text itself exactly when validation converted nothing; the dump is encoded
    with its keys sorted only when it is not.

    A step's token ids and logprobs, when exactly lists of ints and of finite floats, are
    copied out of the record, left out of the text validated and put back into the dump
    (``twin.lift_numbers``): validating them is most of a step's cost, and the twin would
    return them unchanged. The line is then the dump's own text: the record is read once
    (the lists may be a policy's, changed by its thread meanwhile; the line holds what was
    read and validated)."""
    if TWIN is None:
        return None
    lift = lift_numbers(marked)  # exact number lists: the twin would give them back as they are
    rest = marked if lift is None else lift[0]
    rest_raw = fast_json.orjson_bytes(rest)
    if rest_raw is None:
        return None
    try:
        body: dict[str, Any] = TWIN.validate_json(rest_raw)
    except ValidationError:
        return None
    if not slotted:
        body.pop("seal", None)  # absent unless sealed, as ``_dump`` leaves it
    if body != rest or not shallow_action(body):
        return None
    if lift is not None:
        body["policy"].update(lift[1])  # in place: the keys keep their order
    elif fast_json.unsorted_bytes(body) == rest_raw:  # keys already sorted at every level
        return fast_json.canonical_text(rest_raw), body["record"], body, True
    text = fast_json.fast_canonical(body)
    return None if text is None else (text, body["record"], body, True)


def _checked(i: int, rec: dict[str, Any], marked: dict[str, Any], slotted: bool) -> _Checked:
    """``marked`` encoded with ``canonical_json`` (strict JSON, before validation, so
    values JSON cannot hold are refused rather than quietly turned into ``null``) and
    validated; IntegrityError names record ``i`` when either fails."""
    try:
        text = canonical_json(marked)
    except (TypeError, ValueError) as err:
        raise IntegrityError(
            f"record {i} of episode {rec.get('episode_id')} is not JSON: {err}"
        ) from err
    try:
        model = LINE_ADAPTER.validate_json(text)
    except ValidationError as err:
        raise IntegrityError(
            f"record {i} of episode {rec.get('episode_id')} breaks the "
            f"trajectory schema: {err.errors()[0]['loc']}: "
            f"{err.errors()[0]['msg']}"
        ) from err
    body = _dump(model, slotted)
    return text, body["record"], body, same_json(body, marked)


def _dump(model: AnyLine, slotted: bool) -> dict[str, Any]:
    body = model.model_dump(mode="json")
    if not slotted:
        body.pop("seal", None)  # absent unless sealed, as in files written before seals
    return body


def _chained_line(previous: str, body: dict[str, Any]) -> tuple[str, str]:
    """The digest of ``body`` chained onto ``previous``, and ``body``'s canonical JSON line
    with that digest (a ``digest`` key already in ``body`` is replaced)."""
    digest, _, line = _encode(previous, body, None, "")
    return digest, line


_SEAL_PLACEHOLDER = "f" * 64
_DIGEST_MARK = '"digest":"' + _PLACEHOLDER + '"'
_SEAL_MARK = '"seal":"' + _SEAL_PLACEHOLDER + '"'


def _encode(
    previous: str,
    body: dict[str, Any],
    key: bytes | None,
    previous_seal: str,
    full: str | None = None,
) -> tuple[str, str, str]:
    """``(digest, seal, line)`` of ``body``: the same bytes as ``chain_digest`` (and, with
    ``key``, ``seal_step`` onto ``previous_seal``) followed by ``canonical_json`` of the body
    with its digest (and seal) set, but with the body encoded once: with placeholders in the
    ``digest`` (and ``seal``) slots, which are then cut out (for the bytes the chain covers)
    and filled in (for the line). Without a key the seal returned is ``previous_seal`` and
    the line has none. A body that holds a placeholder entry of its own, deeper down, is
    encoded in parts instead (``_encode_parts``): the cut must find exactly one. ``full``,
    when given, is that encoding with placeholders, already made (``_seal_lines``)."""
    if full is None:
        marked = {**body, "digest": _PLACEHOLDER}
        if key is None:
            marked.pop("seal", None)
        else:
            marked["seal"] = _SEAL_PLACEHOLDER
        full = canonical_json(marked)
    if full.count(_DIGEST_MARK) != 1 or (key is not None and full.count(_SEAL_MARK) != 1):
        return _encode_parts(previous, body, key, previous_seal)
    # canonical JSON sorts keys: full is "{" head-entries "digest" [middle "seal"] tail "}",
    # and every cut piece keeps the commas that separated it from the placeholders
    i = full.index(_DIGEST_MARK)
    head, rest = full[:i], full[i + len(_DIGEST_MARK) :]
    if key is None:  # rest is [",<after>"] "}"
        if len(head) > 1 and len(rest) > 1:  # "{<before>," and ",<after>}": one comma kept
            unsealed = head + rest[1:]
        else:
            unsealed = "{" + ",".join(p for p in (head[1:-1], rest[1:-1]) if p) + "}"
        digest = chain_step(previous, unsealed)
        return digest, previous_seal, head + '"digest":"' + digest + '"' + rest
    j = rest.index(_SEAL_MARK)  # between is "," or ",<middle>,"; tail is [",<after>"] "}"
    between, tail = rest[:j], rest[j + len(_SEAL_MARK) :]
    pieces = (head[1:-1], between[1:-1], tail[1:-1])
    unsealed = "{" + ",".join(p for p in pieces if p) + "}"
    digest = chain_step(previous, unsealed)
    seal = seal_step(key, previous_seal, unsealed)
    return digest, seal, f'{head}"digest":"{digest}"{between}"seal":"{seal}"{tail}'


def _encode_parts(
    previous: str, body: dict[str, Any], key: bytes | None, previous_seal: str
) -> tuple[str, str, str]:
    """``_encode`` with the body encoded in parts, for bodies the placeholder cut cannot
    serve; the same bytes. Canonical JSON sorts keys, so the ``digest`` and ``seal`` entries
    sit between the keys sorting around them."""
    before = canonical_json({k: v for k, v in body.items() if k < "digest"})[1:-1]
    if key is None:  # two parts, as the unkeyed chain has always been encoded
        rest = {k: v for k, v in body.items() if k > "digest" and k != "seal"}
        middle, after = canonical_json(rest)[1:-1], ""
    else:
        middle = canonical_json({k: v for k, v in body.items() if "digest" < k < "seal"})[1:-1]
        after = canonical_json({k: v for k, v in body.items() if k > "seal"})[1:-1]
    unsealed = "{" + ",".join(part for part in (before, middle, after) if part) + "}"
    digest = chain_step(previous, unsealed)
    parts = [before, '"digest":"' + digest + '"', middle]
    seal = previous_seal
    if key is not None:
        seal = seal_step(key, previous_seal, unsealed)
        parts.append('"seal":"' + seal + '"')
    parts.append(after)
    return digest, seal, "{" + ",".join(part for part in parts if part) + "}"


class TrajectoryWriter:
    """Appends sealed episodes to a JSONL file, durably.

    With ``key`` every line is also sealed onto the file's keyed chain (``state``: where an
    appended-to file's chain stands, from ``recover_run``), and ``seal_run`` closes an
    invocation with a run seal covering the whole file. Without a key ``seal_run`` writes
    nothing: the file keeps the unkeyed format of files written before seals existed.

    A continued file that ends with a run seal (``state.trailing``) has that line rewritten
    as ``continued`` before this writer's first line (``gymforge.trajectory.seal``): a
    writer that never writes leaves the file as it was."""

    def __init__(
        self,
        path: str | Path,
        *,
        append: bool = False,
        key: bytes | None = None,
        config: dict[str, Any] | None = None,
        state: ChainState | None = None,
    ) -> None:
        if state is not None and not append:
            raise ValueError("a chain state continues a file: pass append=True")
        self.path = Path(path)
        self.key = key
        self.config = dict(config or {})
        self.state = state or ChainState()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[str] = open(self.path, "a" if append else "w", encoding="utf-8")  # noqa: SIM115

    def write_episode(self, records: list[dict[str, Any]]) -> None:
        self._continue_seal()
        self._write(_seal_lines(records, self.key, self.state))

    def encode_episode(self, records: list[dict[str, Any]]) -> list[str]:
        """The lines ``write_episode`` would write, the file's chain advanced past them:
        hand them to ``write_lines`` next (a writer that batches episodes into one fsync)."""
        self._continue_seal()
        return _seal_lines(records, self.key, self.state)

    def write_lines(self, lines: list[str]) -> None:
        """Append lines from ``encode_episode``, in the order encoded, with one fsync."""
        self._write(lines)

    def seal_run(self, run_id: str, files: dict[str, str] | None = None) -> None:
        """End this invocation's writing with a run seal over the file so far (with a key),
        recording the sha256 of the run's documents ``files``."""
        if self.key is None:
            return
        self._continue_seal()
        body = self.state.run_seal_body(run_id, self.config, self.key, files)
        _, self.state.seal, line = _encode("", body, self.key, self.state.seal)
        self.state.last_run_seal = self.state.seal
        self._write([line])

    def _continue_seal(self) -> None:
        """Rewrite the run seal the file ends with as ``continued``, in place on the chain."""
        trailing, self.state.trailing = self.state.trailing, None
        if trailing is None or self.key is None:
            return
        body = {k: v for k, v in trailing.raw.items() if k not in ("digest", "seal")}
        body["continued"] = True
        _, seal, line = _encode("", body, self.key, trailing.before)
        self._fh.flush()
        os.truncate(self.path, trailing.offset)  # the handle appends: it writes at the new end
        self._write([line])
        self.state.seal = self.state.last_run_seal = seal

    def _write(self, lines: list[str]) -> None:
        self._fh.write("".join(line + "\n" for line in lines))
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> TrajectoryWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class EpisodeLog:
    """The lines of one episode as read back; ``end`` is None if the episode is incomplete."""

    episode_id: str
    steps: list[StepRecord] = field(default_factory=list)
    end: EpisodeRecord | None = None
    raw: list[dict[str, Any]] = field(default_factory=list)
    first_line: int = 0


def read_records(
    path: str | Path,
) -> Iterator[tuple[int, dict[str, Any], AnyLine]]:
    """Yield ``(line_number, raw_dict, model)`` of every line, run seals included;
    IntegrityError on bad text, JSON or schema."""
    with open(path, "rb") as fh:
        for n, data in enumerate(fh, 1):
            if not data.strip():
                continue
            try:
                raw = json.loads(data.decode("utf-8"))
                yield n, raw, LINE_ADAPTER.validate_python(raw)
            except UnicodeDecodeError:
                raise IntegrityError(f"line {n}: not UTF-8 text") from None
            except json.JSONDecodeError as err:
                raise IntegrityError(f"line {n}: not JSON ({err.msg}); truncated write?") from err
            except ValidationError as err:
                e = err.errors()[0]
                loc = ".".join(str(x) for x in e["loc"])
                raise IntegrityError(
                    f"line {n}: breaks the trajectory schema at {loc}: {e['msg']}"
                ) from err


def read_episodes(path: str | Path) -> list[EpisodeLog]:
    """Group a file's records by episode, in file order (run seals are skipped: checking
    them is ``gymforge.trajectory.check.check_file``'s)."""
    episodes: dict[str, EpisodeLog] = {}
    for n, raw, rec in read_records(path):
        if isinstance(rec, RunSealRecord):
            continue
        log = episodes.get(rec.episode_id)
        if log is None:
            log = episodes[rec.episode_id] = EpisodeLog(rec.episode_id, first_line=n)
        elif log.end is not None:
            raise IntegrityError(f"line {n}: record after the end of episode {rec.episode_id}")
        log.raw.append(raw)
        if isinstance(rec, StepRecord):
            log.steps.append(rec)
        else:
            log.end = rec
    return list(episodes.values())


def verify_chain(log: EpisodeLog) -> None:
    """Check the digest chain, step numbering and totals of one episode; IntegrityError if not."""
    where = f"episode {log.episode_id} (line {log.first_line})"
    if log.end is None:
        raise IntegrityError(f"{where}: no episode record; the episode is incomplete")
    previous = ""
    for i, raw in enumerate(log.raw):
        expected = chain_digest(previous, raw)
        if raw.get("digest") != expected:
            raise IntegrityError(
                f"{where}: digest mismatch at record {i} ({record_label(raw)}): the "
                "record was edited, reordered or removed"
            )
        previous = expected
    for i, s in enumerate(log.steps):
        if s.step != i:
            raise IntegrityError(f"{where}: step {s.step} found where step {i} was expected")
        if (s.terminated or s.truncated) and i != len(log.steps) - 1:
            raise IntegrityError(f"{where}: step {i} ends the episode but more steps follow")
    end, last = log.end, log.steps[-1]
    if end.steps != len(log.steps) - 1:
        raise IntegrityError(
            f"{where}: episode record counts {plural(end.steps, 'step')}, file holds "
            f"{len(log.steps) - 1}"
        )
    # a policy that stopped (its context filled up, its harness exited) ends the episode
    # itself: no terminal env step
    cut_by_policy = end.truncated and end.failure_reason in POLICY_STOP_REASONS
    ended = last.terminated or last.truncated
    if (len(log.steps) < 2 or not ended) and not cut_by_policy:
        raise IntegrityError(f"{where}: the last step does not end the episode")
    totals = component_totals([s.reward_components for s in log.steps])
    given_by_steps = {
        "reward_components": totals,
        "reward": math.fsum(totals.values()),
        "terminated": last.terminated and not cut_by_policy,
        "truncated": last.truncated or cut_by_policy,
        "success": bool(last.info.get("success")) and not cut_by_policy,
    }
    if cut_by_policy and ended:
        raise IntegrityError(f"{where}: cut short by the policy after the episode had ended")
    for name, value in given_by_steps.items():
        if getattr(end, name) != value:
            raise IntegrityError(
                f"{where}: episode record {name} = {getattr(end, name)!r} but its steps "
                f"give {value!r}"
            )


def sealed_log(records: list[dict[str, Any]]) -> EpisodeLog:
    """Seal an episode's records and read them back, exactly as a file round trip would."""
    raws = [json.loads(line) for line in seal_episode(records)]
    log = EpisodeLog(raws[0]["episode_id"], raw=raws)
    for raw in raws:
        rec = LINE_ADAPTER.validate_python(raw)
        if isinstance(rec, StepRecord):
            log.steps.append(rec)
        elif isinstance(rec, EpisodeRecord):
            log.end = rec
    return log


def recover_finished(path: str | Path) -> list[dict[str, Any]]:
    """``recover_run`` of an unsealed file: the kept episode records."""
    return recover_run(path, None)[0]


def recover_run(path: str | Path, key: bytes | None) -> tuple[list[dict[str, Any]], ChainState]:
    """Prepare a trajectory file for ``--resume``: keep every complete, verified episode and
    cut off a torn tail (a partial line or an episode without its closing record), which is
    all a crash can leave since episodes are written whole. Returns the kept episode records
    and where the file's keyed chain stands, for the writer continuing it.

    With ``key`` every kept line must carry a valid seal, so a forged file is never
    extended and re-sealed; a sealed file without the key, or an unsealed one with a key,
    is refused (either would leave a partly sealed file). Damage anywhere but the tail
    raises IntegrityError rather than dropping finished work."""
    p = Path(path)
    data = p.read_bytes()
    kept: list[dict[str, Any]] = []
    state = ChainState()
    chain = ""  # the keyed chain's end after the last line read
    log: EpisodeLog | None = None
    good_end = pos = 0
    lines = data.splitlines(keepends=True)
    for n, line in enumerate(lines, 1):
        pos += len(line)
        try:
            if not line.endswith(b"\n"):
                raise ValueError("no newline")
            raw = json.loads(line)
            rec = LINE_ADAPTER.validate_python(raw)
        except (ValueError, ValidationError) as err:
            if any(b'"record":"episode"' in later for later in lines[n:]):
                raise IntegrityError(
                    f"{p}: line {n} is damaged and finished episodes follow "
                    "it; refusing to truncate"
                ) from err
            break
        chain = _check_resumable(p, n, raw, key, chain)
        if isinstance(rec, RunSealRecord):
            if log is not None:
                raise IntegrityError(f"{p}: line {n}: a run seal inside an episode")
            assert key is not None  # _check_resumable refused a run seal without a key
            check_run_seal(n, raw, state, key)
            passed_run_seal(state, pos - len(line), raw)
            good_end = pos
            continue
        if log is None or log.episode_id != rec.episode_id:
            log = EpisodeLog(rec.episode_id, first_line=n)
        log.raw.append(raw)
        if isinstance(rec, StepRecord):
            log.steps.append(rec)
            continue
        log.end = rec
        verify_chain(log)
        for record in log.raw:
            state.add(record)
        kept.append(raw)
        good_end, log = pos, None
    if good_end < len(data):
        with open(p, "r+b") as fh:
            fh.truncate(good_end)
            fh.flush()
            os.fsync(fh.fileno())
    return kept, state


def _check_resumable(path: Path, n: int, raw: dict[str, Any], key: bytes | None, chain: str) -> str:
    """Refuse to continue a file whose line ``n`` the writer could not seal onto; return
    the keyed chain's end after the line (``chain`` is its end before)."""
    sealed = "seal" in raw
    if sealed and key is None:
        raise UserError(f"{path} is a sealed run; resuming it needs its key: {NEED_KEY}")
    if key is None:
        return chain
    if not sealed:
        raise UserError(
            f"{path} holds unsealed records (line {n}); resuming it with a seal key would "
            "leave it partly sealed: resume without the key, or start a new run"
        )
    if raw["seal"] != seal_step(key, chain, unsealed_json(raw)):
        raise bad_seal(n, raw)
    return str(raw["seal"])


def reseal(path: str | Path, key: bytes, files: dict[str, str]) -> bool:
    """Close a finished sealed file again with a run seal recording ``files`` (the sha256 of
    the run's documents, e.g. once ``eval.json`` is written): its run seal becomes
    ``continued`` and a copy of it, naming it, ends the file. Every seal is checked first.
    Returns False, writing nothing, for a file that does not end with a final run seal (an
    unfinished or cut run stays unfinished)."""
    state = _sealed_state(Path(path), key)
    if state.trailing is None or state.trailing.raw.get("continued"):
        return False  # a continued run seal at the end: a cut file, not a finished one
    last = state.trailing.raw
    with TrajectoryWriter(path, append=True, key=key, config=last["config"], state=state) as w:
        w.seal_run(str(last["run_id"]), files)
    return True


def _sealed_state(path: Path, key: bytes) -> ChainState:
    """Where the keyed chain of sealed file ``path`` stands, every line's seal and every run
    seal's counts checked (IntegrityError at the first that fails). Only the seals: a line
    whose seal verifies was written, schema-checked, by a holder of the key, so this skips
    the schema and digest checks ``recover_run`` repeats (half its cost)."""
    state = ChainState()
    pos = 0
    with open(path, "rb") as fh:
        for n, line in enumerate(fh, 1):
            start, pos = pos, pos + len(line)
            try:
                raw = json.loads(line)
            except ValueError:
                raise IntegrityError(f"{path}: line {n} is not JSON; not a finished run") from None
            if not isinstance(raw, dict) or "seal" not in raw:
                raise IntegrityError(f"{path}: line {n} is not sealed")
            if raw["seal"] != seal_step(key, state.seal, unsealed_json(raw)):
                raise bad_seal(n, raw)
            if raw.get("record") == "run_seal":
                check_run_seal(n, raw, state, key)
                passed_run_seal(state, start, raw)
            else:
                state.add(raw)
    return state
