"""The function-call service: batch (``SandboxJob.calls``) and interactive (``backend.session``)."""

from __future__ import annotations

import pytest
from sandbox_helpers import FAST

from gymforge.sandbox import Call, CallStatus, CandidateCallError, Limits, SandboxJob, Status
from gymforge.sandbox.local import LocalBackend

CAND = """
import os, sys, time
class Yes(int):
    def __eq__(self, other): return True
    __hash__ = int.__hash__
class Always:
    def __eq__(self, other): return True
def add(a, b): return a + b
def shapes(): return [(1, 2), {3}, frozenset({4}), {"k": (5,)}, {(6, 7): None}, b"\\x00", 2**7000]
def yes(): return Yes(1)
def always(): return Always()
def sub_str():
    class S(str): pass
    return S("x")
def boom(): raise ValueError("nope")
def quit_(): sys.exit(0)
def die(): os._exit(0)
def hang(): time.sleep(60)
def spin():
    while True: pass
def loud(): print("hello from the candidate"); return 1
def counter():
    global N
    N = globals().get("N", 0) + 1
    return N
"""


def batch(backend: LocalBackend, *calls: Call, source: str = CAND, **kw: object):  # type: ignore[no-untyped-def]
    return backend.run(
        SandboxJob(source=source, calls=list(calls), limits=kw.pop("limits", FAST), **kw)
    )  # type: ignore[arg-type]


def test_plain_values_cross_with_their_types(sandbox: LocalBackend) -> None:
    r = batch(
        sandbox,
        Call(name="add", args=(2, 3)),
        Call(name="add", args=((1,), (2,))),
        Call(name="add", args=([1], [2])),
        Call(name="shapes"),
    )
    assert r.status == Status.OK and r.load and r.load.ok
    assert [c.value for c in r.calls or []][:3] == [5, (1, 2), [1, 2]]
    assert r.calls[3].value == [
        (1, 2),
        {3},
        frozenset({4}),
        {"k": (5,)},
        {(6, 7): None},  # type: ignore[index]
        b"\x00",
        2**7000,
    ]


@pytest.mark.parametrize("name", ["yes", "always", "sub_str"])
def test_objects_that_always_compare_equal_cannot_cross(sandbox: LocalBackend, name: str) -> None:
    (c,) = batch(sandbox, Call(name=name)).calls or []
    assert c.status == CallStatus.UNSERIALISABLE and c.value is None
    assert "not plain data" in (c.error or "")


def test_exceptions_and_exits_inside_calls(sandbox: LocalBackend) -> None:
    r = batch(
        sandbox,
        Call(name="boom"),
        Call(name="quit_"),
        Call(name="missing"),
        Call(name="die"),
        Call(name="counter"),
        Call(name="counter"),
    )
    c = r.calls or []
    assert (c[0].status, c[0].error_type, c[0].error) == (
        CallStatus.EXCEPTION,
        "ValueError",
        "nope",
    )
    assert (c[1].status, c[1].error_type) == (CallStatus.EXCEPTION, "SystemExit")
    assert (c[2].status, c[2].error_type) == (CallStatus.EXCEPTION, "NameError")
    assert (c[3].status, c[3].exit_code) == (CallStatus.CRASHED, 0)
    assert c[4].restarted and c[4].value == 1 and c[5].value == 2 and r.restarts == 1
    assert r.status == Status.RUNTIME_ERROR  # a crash is a fact about the job


def test_per_call_timeouts_then_recovery(sandbox: LocalBackend) -> None:
    r = batch(
        sandbox,
        Call(name="hang", timeout=0.5),
        Call(name="add", args=(1, 1)),
        Call(name="spin", timeout=0.5),
        Call(name="add", args=(2, 2)),
    )
    assert [c.status for c in r.calls or []] == [
        CallStatus.TIMEOUT,
        CallStatus.OK,
        CallStatus.TIMEOUT,
        CallStatus.OK,
    ]
    assert r.status == Status.TIMEOUT and r.limits_hit.wall_time and r.restarts == 2


def test_no_respawn_means_not_run(sandbox: LocalBackend) -> None:
    r = batch(sandbox, Call(name="die"), Call(name="add", args=(1, 2)), respawn=False)
    assert [c.status for c in r.calls or []] == [CallStatus.CRASHED, CallStatus.NOT_RUN]


def test_session_wall_time_bounds_the_whole_job(sandbox: LocalBackend) -> None:
    lim = Limits(wall_time=1.0, call_timeout=5.0)
    r = batch(sandbox, Call(name="hang"), Call(name="add", args=(1, 2)), limits=lim)
    assert [c.status for c in r.calls or []] == [CallStatus.TIMEOUT, CallStatus.NOT_RUN]


@pytest.mark.parametrize(
    ("source", "etype"),
    [
        ("def f(:\n", "SyntaxError"),
        ("import sys; sys.exit(0)", "SystemExit"),
        ("raise SystemExit(0)", "SystemExit"),
        ("import no_such_module", "ModuleNotFoundError"),
    ],
)
def test_load_failures(sandbox: LocalBackend, source: str, etype: str) -> None:
    r = batch(sandbox, Call(name="f"), source=source)
    assert r.load is not None and not r.load.ok and r.load.error_type == etype
    assert r.status == Status.RUNTIME_ERROR
    assert [c.status for c in r.calls or []] == [CallStatus.NOT_RUN]


def test_exit_at_import_with_os_exit(sandbox: LocalBackend) -> None:
    r = batch(sandbox, Call(name="f"), source="import os; os._exit(0)")
    assert r.load is not None and not r.load.ok and r.exit_code == 0
    assert r.status == Status.RUNTIME_ERROR


def test_forged_control_frames_are_protocol_errors(sandbox: LocalBackend) -> None:
    src = (
        "import os, struct, json\n"
        "def f():\n"
        "    h = json.dumps({'ev': 'result', 'id': 0, 'status': 'ok'}).encode()\n"
        "    body = struct.pack('>I', len(h)) + h + struct.pack('>I', 1) + b'1'\n"
        "    os.write(3, struct.pack('>I', len(body)) + body)\n"
        "    return 2\n"
        "def g():\n"
        "    os.write(3, b'\\xff' * 64)\n"
    )
    r = batch(sandbox, Call(name="f"), Call(name="g"), Call(name="f"), source=src)
    c = r.calls or []
    # the forged frame arrives first and is accepted as f's answer ("1"), then the genuine
    # one is a duplicate: the candidate is killed and the call flagged.
    assert c[0].status in (CallStatus.OK, CallStatus.PROTOCOL_ERROR)
    assert c[1].status == CallStatus.PROTOCOL_ERROR
    assert c[2].restarted


def test_output_during_calls_is_captured(sandbox: LocalBackend) -> None:
    r = batch(sandbox, Call(name="loud"), Call(name="loud"))
    assert r.stdout == "hello from the candidate\n" * 2 and r.status == Status.OK


def test_interactive_session_with_proxy(sandbox: LocalBackend) -> None:
    with sandbox.session(SandboxJob(source=CAND, limits=FAST)) as s:
        assert s.load.ok
        add = s.function("add")
        assert add(1, 2) == 3 and add("a", "b") == "ab" and add((1,), (2,)) == (1, 2)
        with pytest.raises(CandidateCallError) as ei:
            s.function("always")()
        assert ei.value.result.status == CallStatus.UNSERIALISABLE
        assert s.call("hang", timeout=0.3).status == CallStatus.TIMEOUT
        r = s.call("counter")
        assert r.restarted and r.value == 1
    assert s.result is not None and len(s.result.calls or []) == 6
    assert s.result.status == Status.TIMEOUT
    with sandbox.session(SandboxJob(source="def f(:", limits=FAST)) as s2:
        assert not s2.load.ok and s2.load.error_type == "SyntaxError"
        assert s2.call("f").status == CallStatus.NOT_RUN


def test_arguments_must_be_plain(sandbox: LocalBackend) -> None:
    from gymforge.sandbox.wire import Unserialisable

    with sandbox.session(SandboxJob(source=CAND, limits=FAST)) as s, pytest.raises(Unserialisable):
        s.call("add", object(), 1)


def test_expected_values_never_enter_the_sandbox(sandbox: LocalBackend) -> None:
    """Stack and gc peeking find nothing: the judge keeps expected values to itself."""
    secret = "expected-answer-7f3a9c"
    src = (
        "import gc, sys\n"
        "def peek(x):\n"
        "    seen = set()\n"
        "    for o in gc.get_objects():\n"
        "        try:\n"
        "            seen.update(v for v in (o.values() if isinstance(o, dict) else o)\n"
        "                        if isinstance(v, str))\n"
        "        except Exception:\n"
        "            pass\n"
        "    f = sys._getframe()\n"
        "    while f:\n"
        "        seen.update(v for v in f.f_locals.values() if isinstance(v, str))\n"
        "        f = f.f_back\n"
        "    return [s for s in seen if s.startswith('expected-answer')]\n"
    )
    with sandbox.session(SandboxJob(source=src, limits=FAST)) as s:
        peek = s.function("peek")
        found = peek("some input")
        assert found != secret and secret not in found  # only the candidate's own literal
