"""``gymforge view DIR``: a live page that follows a run while it is written."""

from __future__ import annotations

from pathlib import Path

import typer

from gymforge.cli.args import port_option
from gymforge.cli.common import app, err, friendly, serve_until_interrupted


@app.command()
@friendly
def view(
    run_dir: Path = typer.Argument(..., help="The run directory (run, eval or calibrate --out)."),
    port: int = port_option(0, help="Port on 127.0.0.1 (0: a free one)."),
    interval: float = typer.Option(1.0, "--interval", help="Seconds between file polls."),
) -> None:
    """Serve a live page on 127.0.0.1 that follows a run while it is written: progress,
    success and reward per family, reward components, failure reasons, the report's plots
    and a trajectory browser that grows as episodes finish. Read only; Ctrl-C stops it."""
    from gymforge.evaluate.live_server import ViewServer

    server = ViewServer(run_dir, port=port, interval=interval).start()
    err.print(f"following {run_dir} at {server.url} (Ctrl-C to stop)")
    serve_until_interrupted(server.stop)
