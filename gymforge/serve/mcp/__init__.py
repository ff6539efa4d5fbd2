"""An environment as an MCP server (``gymforge serve ENV --mcp``; the ``[mcp]`` extra).

Over streamable HTTP a client first opens a session, ``POST /sessions`` (bearer token when
the server has one), and gets its URL, ``http://HOST:PORT/mcp/<session>``: the endpoint any
MCP client (the official SDK's, an agent harness) connects to. Over stdio the process is one
session. A session owns one environment instance; its tools are the environment's own plus
``gymforge_reset(task_id, seed)`` and ``gymforge_submit(reply)``, and every call is one step
of the episode, recorded as the runner records it (``--record FILE`` appends each finished
episode to a trajectory file that ``gymforge replay`` replays). Admission (token, Origin,
capacity per server and per client) and idle reaping are the WebSocket server's
(``gymforge.serve.hub``).

Modules: ``tools`` (the tool list, reset/submit arguments), ``session`` (one session's calls
and records), ``server`` (the SDK's low-level ``Server``), ``http`` (routes), ``launch``.
"""
