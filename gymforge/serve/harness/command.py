"""A ``harness-cmd:`` program, run once per episode, confined.

:class:`ConfinedCommand` runs the command through ``/bin/sh`` in bubblewrap
(:mod:`~gymforge.serve.harness.confine`), its episode directory a fresh one holding
``prompt.json``; its standard output, stripped, is the final message, and a non-zero exit
is an error. It has a network namespace of its own, with only its two endpoints (its proxy
URL and its MCP or shell URL) relayed in (:mod:`~gymforge.serve.harness.netrelay`): the
host's loopback services, the inference server behind the proxy and the outside network
are out of reach, in either mode. In workspace mode (the context has a ``shell_url``) it
also gets the shell (:mod:`~gymforge.serve.harness.shell`: ``gymforge-sh``, its
instruction file). :meth:`ConfinedCommand.kill` kills the sandbox
(the kernel then kills every process of its pid namespace).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import dataclasses
import json
import os
import shutil
import tempfile
from dataclasses import asdict
from pathlib import Path

from gymforge.sandbox.confine import seccomp_fd
from gymforge.serve.harness.confine import EPISODE_DIR, harness_confinement
from gymforge.serve.harness.context import HarnessContext
from gymforge.serve.harness.netrelay import EpisodeRelay
from gymforge.serve.harness.shell import (
    CLIENT_PYTHON,
    client_paths,
    install_client,
    ports,
    workspace_endpoints,
)

_ROOT: list[Path] = []


def episodes_root() -> Path:
    """The directory, one per runner process, that holds every episode directory: the
    runner's own, mode 0700, and hidden from every harness even inside a path it was
    granted (its own episode directory it sees at ``/episode`` only). All harnesses share
    one uid, so without this a harness granted the temp directory would read a sibling's
    ``prompt.json`` (its token) and reach its relay sockets."""
    if not _ROOT or not _ROOT[0].is_dir():
        _ROOT[:] = [Path(tempfile.mkdtemp(prefix="gymforge-harnesses-"))]
        os.chmod(_ROOT[0], 0o700)
        atexit.register(shutil.rmtree, _ROOT[0], True)
    return _ROOT[0]


class ConfinedCommand:
    """One episode's run of ``target`` (module docstring)."""

    def __init__(
        self, target: str, paths: tuple[str, ...], hidden: tuple[str, ...], uid: int
    ) -> None:
        self.target, self.paths, self.hidden, self.uid = target, paths, hidden, uid
        self.process: asyncio.subprocess.Process | None = None

    async def run(self, ctx: HarnessContext) -> str:
        """Run the command confined (module docstring), its episode directory a fresh one."""
        root = episodes_root()
        episode_dir = Path(tempfile.mkdtemp(prefix="gymforge-harness-", dir=root))
        relay: EpisodeRelay | None = None
        try:
            if os.getuid() == 0:
                os.chown(episode_dir, self.uid, self.uid)
            prompt = asdict(ctx) | {"mcp_headers": ctx.mcp_headers}
            (episode_dir / "prompt.json").write_text(json.dumps(prompt))
            endpoints = {
                "OPENAI_BASE_URL": ctx.base_url,
                "OPENAI_API_KEY": ctx.api_key,
                "GYMFORGE_MODEL": ctx.model,
                "GYMFORGE_MCP_URL": ctx.mcp_url,
                "GYMFORGE_EPISODE": ctx.episode_id,
                "GYMFORGE_PROMPT_FILE": f"{EPISODE_DIR}/prompt.json",
            }
            if ctx.shell_url:  # workspace mode: a shell in place of the MCP tools
                endpoints = workspace_endpoints(
                    endpoints, ctx.shell_url, ctx.api_key, ctx.prompt, episode_dir
                )
            else:
                install_client(episode_dir)
            # a network of its own: its two endpoints relayed in, nothing else of the host's
            own = ports(ctx.base_url, ctx.shell_url or ctx.mcp_url)
            relay = await EpisodeRelay(episode_dir, own).start()
            argv = relay.command(["/bin/sh", "-c", self.target], CLIENT_PYTHON)
            confinement = harness_confinement(
                self.target,
                episode_dir,
                endpoints,
                granted=(*self.paths, *client_paths()),
                hidden=(*self.hidden, str(root)),
                uid=self.uid,
            )
            confinement = dataclasses.replace(confinement, share_net=False)
            with seccomp_fd() as fd:
                self.process = await asyncio.create_subprocess_exec(
                    *confinement.command(argv, fd),
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    start_new_session=True,
                    pass_fds=() if fd is None else (fd,),
                )
            try:
                out, err = await self.process.communicate()
            finally:
                await self.kill()
            if self.process.returncode != 0:
                tail = err.decode(errors="replace").strip()[-500:]
                raise RuntimeError(f"exited with code {self.process.returncode}: {tail}")
            return out.decode(errors="replace").strip()
        finally:
            if relay is not None:
                await relay.stop()
            shutil.rmtree(episode_dir, ignore_errors=True)

    async def kill(self) -> None:
        """Kill the harness's sandbox (``bwrap``; the kernel then kills every process of its
        pid namespace) and reap it."""
        process = self.process
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
