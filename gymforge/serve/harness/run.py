"""The run's side of harness policies (:mod:`~gymforge.serve.harness.policy` has the
contract): the policy spec read once (a ``harness:`` function imported, a ``harness-cmd:``
refused where it cannot be confined), and the proxy and bridge every episode shares."""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
import threading
import urllib.request
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote, urlsplit

from gymforge.core.errors import InfraError, UserError
from gymforge.registry.resolve import load_module
from gymforge.sandbox.backend import IsolationUnavailableError
from gymforge.sandbox.confine import DEFAULT_UID, confinement_problem
from gymforge.serve.harness.bridge import HarnessBridge
from gymforge.serve.harness.context import HarnessContext
from gymforge.serve.proxy.server import ProxyConfig, ProxyServer
from gymforge.tools.shell import ShellTool

MODES = ("tools", "workspace")


Target = Callable[[HarnessContext], Any]


class HarnessRun:
    """The run's side of harness policies: the spec, checked once, the settings, and the
    proxy and bridge every episode of the run shares, started on first use and stopped by
    :meth:`aclose`."""

    def __init__(
        self,
        spec: str,
        *,
        upstream: str,
        model: str | None = None,
        api_key: str | None = None,
        grace_s: float = 5.0,
        wall_clock_s: float = 600.0,
        checkpoint: str | None = None,
        paths: tuple[str, ...] = (),
        hidden: tuple[str, ...] = (),
        uid: int = DEFAULT_UID,
        mode: str = "tools",
        shell: ShellTool | None = None,
    ) -> None:
        kind, _, target = spec.partition(":")
        if kind not in ("harness", "harness-cmd") or not target:
            raise UserError(
                f"policy spec must be harness:pkg.module:func or harness-cmd:COMMAND, got {spec!r}"
            )
        self.spec, self.kind, self.target = spec, kind, target
        self.function: Target | None = _import_target(target) if kind == "harness" else None
        if kind == "harness-cmd":
            problem = confinement_problem()
            if problem is not None:
                raise IsolationUnavailableError(
                    f"harness-cmd: cannot confine the harness here: {problem}; run "
                    "`gymforge sandbox doctor`"
                )
        if mode not in MODES:
            raise UserError(f"--harness-mode must be one of {', '.join(MODES)}, got {mode!r}")
        if mode == "workspace" and shell is None:
            raise UserError("--harness-mode workspace: the environment has no shell tool")
        self.mode, self.shell = mode, shell if mode == "workspace" else None
        self.paths, self.hidden, self.uid = tuple(paths), tuple(hidden), uid
        self.upstream, self.api_key = upstream, api_key
        self.model = model
        self.grace_s, self.wall_clock_s = grace_s, wall_clock_s
        self.checkpoint = checkpoint or spec
        self.token = secrets.token_urlsafe(24)  # the runner's: control routes; never a harness's
        self.proxy: ProxyServer | None = None
        self.bridge: HarnessBridge | None = None
        self._starting = threading.Lock()

    def ensure_started(self) -> tuple[ProxyServer, HarnessBridge, str]:
        """The run's proxy, bridge and model name, started once (episodes starting at the
        same time call this from several threads)."""
        with self._starting:
            if self.proxy is None:
                config = ProxyConfig(
                    upstream=self.upstream,
                    upstream_api_key=self.api_key,
                    token=self.token,
                    idle_timeout=self.wall_clock_s + self.grace_s,  # finish() closes episodes
                )
                self.proxy = ProxyServer(config).start()
            if self.bridge is None:
                self.bridge = HarnessBridge(self.token).start()
            if self.model is None:
                self.model = _first_model(self.upstream, self.api_key)
            return self.proxy, self.bridge, self.model

    async def aclose(self) -> None:
        if self.proxy is not None:
            await asyncio.to_thread(self.proxy.stop)
            self.proxy = None
        if self.bridge is not None:
            await asyncio.to_thread(self.bridge.stop)
            self.bridge = None


def _import_target(target: str) -> Target:
    module_name, sep, attr = target.rpartition(":")
    if not sep or not module_name or not attr:
        raise UserError(f"harness:{target}: give pkg.module:func (or path/to/file.py:func)")
    try:
        module = load_module(module_name)
    except ImportError as err:
        raise UserError(f"cannot import harness module {module_name!r}: {err}") from err
    fn = vars(module).get(attr)
    if not callable(fn):
        raise UserError(f"{module_name}:{attr} is not a callable harness(ctx)")
    return fn  # type: ignore[no-any-return]


def _first_model(upstream: str, api_key: str | None) -> str:
    """The first model ``UPSTREAM/models`` lists, asked as the proxy asks the upstream: an
    upstream's ``user:password@`` is sent as Basic auth (without an API key), never in the
    URL ``urllib`` would take for the host (a DNS query for ``user:password@host``), and
    never shown in the error (``***@``)."""
    parts = urlsplit(upstream)
    userinfo, at, host = parts.netloc.rpartition("@")
    shown = parts._replace(netloc="***@" + host if at else host).geturl().rstrip("/")
    req = urllib.request.Request(parts._replace(netloc=host).geturl().rstrip("/") + "/models")
    if api_key:
        req.add_header("Authorization", f"Bearer {api_key}")
    elif at:
        user, _, password = userinfo.partition(":")
        basic = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode()
        req.add_header("Authorization", f"Basic {basic}")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            data = json.load(r)
        return str(data["data"][0]["id"])
    except (OSError, ValueError, KeyError, IndexError, TypeError) as err:
        raise InfraError(f"cannot read the model name from {shown}/models: {err}") from err
