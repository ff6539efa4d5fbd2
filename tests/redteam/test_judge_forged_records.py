"""Attack: smuggle deep or bulky data to the judge inside the sandbox's own records.

A candidate can write control records itself (its answers' ``etype``/``msg``, a ``loaded``
record, the ``exception`` record): the zygote forwards fields of them to the host, which
decodes them in the reply header. Nested ~980 deep (just under the zygote's JSON recursion
limit, so the zygote accepts them), they land in the host's decoder, whose stack is deeper:
under pytest the reply failed with a RecursionError, the worker was killed and the job came
back ``internal_error``: a wrong answer turned into an unscored infrastructure failure.
Success means the judge's decoding of a reply can be made to fail or to build arbitrary
structures; the defence: the zygote forwards only flat, size-capped scalars of any record a
job wrote.
"""

from __future__ import annotations

import pytest

from gymforge.sandbox import Call, CallStatus, Limits, SandboxJob, Status
from gymforge.sandbox.local import LocalBackend

FORGER = r"""
import os, struct

def frame(head):
    body = struct.pack(">I", len(head)) + head
    return struct.pack(">I", len(body)) + body

def f(field, depth):
    deep = "[" * depth + "]" * depth
    head = '{"ev":"result","id":0,"status":"exception","etype":"E","msg":"m"}'
    head = head.replace('"%s"' % ("E" if field == "etype" else "m"), deep).encode()
    os.write(3, frame(head))
    os._exit(0)
"""


@pytest.mark.parametrize("field", ["etype", "msg"])
def test_nested_fields_of_a_forged_answer_never_reach_the_judge(
    sandbox: LocalBackend, field: str
) -> None:
    job = SandboxJob(source=FORGER, calls=[Call(name="f", args=(field, 980))], limits=Limits())
    r = sandbox.run(job)
    assert r.status is not Status.INTERNAL_ERROR, r
    (call,) = r.calls or []
    assert call.status is CallStatus.EXCEPTION, call
    assert call.error is None if field == "msg" else call.error == "m", call
    assert call.error_type is None if field == "etype" else call.error_type == "E", call
