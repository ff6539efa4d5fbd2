"""Environment as a service: ``serve``."""

from __future__ import annotations

from pathlib import Path

import typer

from gymforge.cli.args import port_option
from gymforge.cli.common import SEAL_KEY_HELP, app, friendly
from gymforge.cli.sandbox_flags import SANDBOX, use_sandbox
from gymforge.core.errors import UserError
from gymforge.trajectory.seal import load_key


@app.command()
@friendly
def serve(
    env: str = typer.Argument(..., help="Environment id or import path (pkg.mod:factory)."),
    host: str = typer.Option(
        "127.0.0.1", "--host", help="Bind address; beyond loopback needs a token."
    ),
    port: int = port_option(8765, "-p"),
    token: str | None = typer.Option(
        None,
        "--token",
        envvar="GYMFORGE_TOKEN",
        help="Bearer token required on everything but /health (or $GYMFORGE_TOKEN).",
    ),
    max_sessions: int = typer.Option(256, "--max-sessions", min=1, help="Concurrent sessions."),
    max_sessions_per_client: int | None = typer.Option(
        None,
        "--max-sessions-per-client",
        min=1,
        help="Concurrent sessions per client (address and token); default max-sessions/4.",
    ),
    idle_timeout: float = typer.Option(
        300.0, "--idle-timeout", help="Seconds without a message before a session is reaped."
    ),
    max_message_bytes: int = typer.Option(
        8 * 2**20, "--max-message-bytes", help="A larger message gets too_large and a close."
    ),
    request_timeout: float = typer.Option(
        300.0, "--request-timeout", help="Seconds one environment call may take."
    ),
    qa_hooks: bool = typer.Option(
        False,
        "--qa-hooks/--no-qa-hooks",
        help="Serve the oracle, oracle plans, red-team cases and truth digests (remote QA and "
        "the oracle baseline need them; never on a server the evaluated policy can reach).",
    ),
    fault_injection: bool = typer.Option(
        True,
        "--fault-injection/--no-fault-injection",
        help="Let a session inject faults into its own tools (QA error_paths).",
    ),
    allow_origin: list[str] = typer.Option(
        None, "--allow-origin", help="Browser Origin allowed to open sessions (repeatable)."
    ),
    dataset: Path | None = typer.Option(None, "--dataset", help="Also serve this JSONL dataset."),
    log_level: str = typer.Option("warning", "--log-level", help="uvicorn log level."),
    mcp: bool = typer.Option(
        False, "--mcp", help="Serve over MCP (one session per episode); see docs/mcp.md."
    ),
    transport: str = typer.Option(
        "http", "--transport", help="With --mcp: http (streamable HTTP) or stdio."
    ),
    record: Path | None = typer.Option(
        None,
        "--record",
        help="Append every episode a client starts (finished or not) to this trajectory file "
        "(sealed with $GYMFORGE_SEAL_KEY or --seal-key-file).",
    ),
    seal_key_file: Path | None = typer.Option(None, "--seal-key-file", help=SEAL_KEY_HELP),
    sandbox: str | None = SANDBOX,
) -> None:
    """Serve ENV over WebSocket + HTTP: one session per episode stream, until interrupted.

    Clients: `gymforge run|qa ws://HOST:PORT --token T`, or make_env("ws://HOST:PORT")
    with $GYMFORGE_TOKEN (`gymforge qa` and `--policy oracle` need a server started with
    --qa-hooks). Protocol and routes: GET /schema, gymforge.serve.protocol.
    With --mcp: an MCP server instead (POST /sessions, then MCP at /mcp/ID; docs/mcp.md);
    --record FILE keeps every episode clients start, sealed with $GYMFORGE_SEAL_KEY or
    --seal-key-file like `run`.
    """
    use_sandbox(sandbox)
    try:
        from gymforge.serve.config import ServeConfig
        from gymforge.serve.launch import serve as run_server
    except ImportError as err:  # the [serve] extra is missing
        raise UserError(f"gymforge serve needs the [serve] extra ({err.name} is missing)") from err
    config = ServeConfig(
        token=token or None,
        max_sessions=max_sessions,
        max_sessions_per_client=max_sessions_per_client,
        idle_timeout=idle_timeout,
        max_message_bytes=max_message_bytes,
        request_timeout=request_timeout,
        qa_hooks=qa_hooks,
        fault_injection=fault_injection,
        allowed_origins=tuple(allow_origin or ()),
    )
    if seal_key_file is not None and record is None:
        raise UserError("--seal-key-file seals the --record file: it goes with --record")
    seal_key = load_key(seal_key_file) if record is not None else None
    if not mcp:
        if transport != "http":
            raise UserError("--transport goes with --mcp")
        run_server(env, host, port, config, log_level, dataset, record, seal_key)
        return
    if qa_hooks:
        raise UserError("--qa-hooks is not offered over --mcp: an MCP client is the agent")
    if transport not in ("http", "stdio"):
        raise UserError(f"--transport must be http or stdio, not {transport!r}")
    try:
        from gymforge.serve.mcp.launch import serve_http, serve_stdio
    except ImportError as err:  # the [mcp] extra is missing
        raise UserError(
            f"gymforge serve --mcp needs the [mcp] extra ({err.name} is missing)"
        ) from err
    if transport == "stdio":
        serve_stdio(env, config, dataset, record, seal_key)
    else:
        serve_http(env, host, port, config, log_level, dataset, record, seal_key)
