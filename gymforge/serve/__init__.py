"""Environment as a service: ``gymforge serve`` and the ``RemoteEnvironment`` client.

Server (``[serve]`` extra: fastapi, uvicorn, websockets): ``launch`` (``serve``,
``ServerThread``), ``app`` (HTTP routes, auth), ``hub`` (admission: token, Origin, capacity;
the reaper task), ``session`` (one WebSocket session per episode stream: the message loop
and handlers), ``meta`` (metadata and task operations), ``metrics``, ``config``. Client
(websockets, httpx): ``client`` (``RemoteEnvironment``, ``remote_factory``; any
``ws://``/``wss://`` ref works wherever an environment ref does), ``remote_tasks`` (a
``TaskSource`` over HTTP), ``remote_qa``. The wire protocol is specified in
``gymforge.serve.protocol`` and served at ``GET /schema``.

How QA runs against a served environment (``gymforge qa ws://HOST:PORT --token T``, against a
server started with ``--qa-hooks``): every
check runs unchanged on the client, through the ordinary ``Environment`` contract. What the
checks read besides the contract comes from the server's real objects:

- ``tasks``: a ``TaskSource`` proxy; sampling, resolution (split stamped, truth replaced by
  its digest), held-out predicates and family methods execute on the server, so every
  ``TRAINING_PATHS`` entry is driven against the server's own split;
- ``qa``/``budget``/``spec``: rebuilt from ``/metadata``;
- ``oracle_action`` (a session message), ``oracle_plan`` (``POST /oracle/plan``) and the
  current ``task``: for scripted baselines and the generic red-team attacks;
- ``toolset``: tool schemas and write flags; fault injection (``set_fault_plan``, crashing
  tools) is forwarded into the session's own server-side toolset;
- environment-specific red-team cases are Python policies that cannot cross the wire: the
  server runs each against the session's environment (``policy_start``/``policy_act``)
  while the client steps and judges the episode as usual.

Privileged operations reveal hidden truth (the oracle, oracle plans, red-team cases, task
truth digests), so they are off unless the server is started with ``--qa-hooks``: remote QA
and the scripted ``oracle`` baseline need it, and a server the evaluated policy can reach
must not have it. Fault injection (into a session's own tools) is switched off with
``--no-fault-injection``. Without either, the affected checks fail with an explicit reason
rather than pass without testing. One client (remote address and token) holds at most
``--max-sessions-per-client`` sessions (default a quarter of ``--max-sessions``), and a
frame that is not a message (too large, not UTF-8 JSON, not an object, too deep) gets a
fatal error and a close."""

from gymforge.serve.config import TOKEN_ENV, ServeConfig

__all__ = ["TOKEN_ENV", "RemoteEnvironment", "ServeConfig", "remote_factory"]


def __getattr__(name: str) -> object:
    if name in ("RemoteEnvironment", "remote_factory"):
        from gymforge.serve import client

        return getattr(client, name)
    raise AttributeError(name)
