"""``gymforge proxy``: the token-recording OpenAI-compatible proxy, standalone."""

from __future__ import annotations

import typer

from gymforge.cli.args import port_option
from gymforge.cli.common import app, err, friendly, serve_until_interrupted


@app.command()
@friendly
def proxy(
    upstream: str = typer.Option(
        ..., "--upstream", help="The inference server's OpenAI base URL (http://HOST:PORT/v1)."
    ),
    host: str = typer.Option(
        "127.0.0.1", "--host", help="Bind address; beyond loopback needs a token."
    ),
    port: int = port_option(8766, "-p"),
    token: str | None = typer.Option(
        None,
        "--token",
        envvar="GYMFORGE_TOKEN",
        help="Bearer token required on everything but /health (or $GYMFORGE_TOKEN); it opens "
        "every route. Each episode also gets its own token (POST /episodes returns it), which "
        "opens that episode's routes only: give a harness that one.",
    ),
    upstream_api_key: str | None = typer.Option(
        None, "--upstream-api-key", envvar="OPENAI_API_KEY", help="Key for the upstream server."
    ),
    max_episodes: int = typer.Option(1024, "--max-episodes", min=1, help="Open episodes at once."),
    max_body_bytes: int = typer.Option(
        8 * 2**20, "--max-body-bytes", help="A larger request body is refused (413)."
    ),
    request_timeout: float = typer.Option(
        600.0, "--request-timeout", help="Seconds one upstream call may take (then 504)."
    ),
    idle_timeout: float = typer.Option(
        300.0, "--idle-timeout", help="Seconds without a request before an episode is closed."
    ),
    tokenizer: str | None = typer.Option(
        None,
        "--tokenizer",
        help="Render the chat template locally with this tokenizer (default: the upstream's "
        "/tokenize).",
    ),
    token_in: bool = typer.Option(
        True,
        "--token-in/--pass-through",
        help="Continue extending requests token-in (default) or pass every request through.",
    ),
) -> None:
    """Run the OpenAI-compatible proxy that records each episode's exact prompt and
    completion token ids: episodes are opened with POST /episodes and served at
    /e/EPISODE_ID/v1 until DELETE /episodes/EPISODE_ID returns their transcript."""
    from gymforge.serve.proxy.server import ProxyConfig, ProxyServer

    config = ProxyConfig(
        upstream=upstream,
        upstream_api_key=upstream_api_key,
        token=token,
        host=host,
        port=port,
        max_episodes=max_episodes,
        max_body_bytes=max_body_bytes,
        request_timeout=request_timeout,
        tokenizer=tokenizer,
        token_in=token_in,
        idle_timeout=idle_timeout,
    )
    server = ProxyServer(config).start()
    auth = "bearer token required" if token else "no auth (loopback only)"
    err.print(f"proxy for {upstream} at {server.url} ({auth}); episodes at {server.url}/e/ID/v1")
    serve_until_interrupted(server.stop)
