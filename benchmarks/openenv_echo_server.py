"""OpenEnv's template echo environment under its own app, for ``serve_load.py``.

Run with the interpreter that has OpenEnv (``.venv-interop/bin/python``):
``openenv_echo_server.py ENV_DIR PORT MAX_ENVS [LOOP]`` where ENV_DIR is what ``openenv init``
generated. The template is served unmodified by ``create_app`` under uvicorn, as its
``server/app.py`` does, except that ``max_concurrent_envs`` is raised to MAX_ENVS (the
template's 1 would refuse the second session) and uvicorn's access log is off (as it is
for ``gymforge serve``). LOOP is uvicorn's ``--loop``: ``auto`` (the default, uvloop
when installed, as deployed) or ``asyncio`` (the loop ``gymforge serve`` gets without
uvloop: the like-for-like row). Prints ``ready`` once listening.
"""

from __future__ import annotations

import importlib
import resource
import sys


def main() -> None:
    env_dir, port, max_envs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    loop = sys.argv[4] if len(sys.argv) > 4 else "auto"
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, 2 * max_envs + 256)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    sys.path.insert(0, env_dir)
    import uvicorn
    from openenv.core.env_server.http_server import create_app
    from openenv.core.env_server.interfaces import Environment
    from openenv.core.env_server.types import Action, Observation

    models = importlib.import_module("models")
    env_mod = importlib.import_module(f"server.{_env_module(env_dir)}")

    def pick(mod: object, base: type) -> type:
        return next(
            v
            for v in vars(mod).values()
            if isinstance(v, type) and issubclass(v, base) and v is not base
        )

    app = create_app(
        pick(env_mod, Environment),
        pick(models, Action),
        pick(models, Observation),
        env_name="benchecho",
        max_concurrent_envs=max_envs,
    )
    print("ready", flush=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False, loop=loop)


def _env_module(env_dir: str) -> str:
    from pathlib import Path

    found = sorted(Path(env_dir, "server").glob("*_environment.py"))
    return found[0].stem


if __name__ == "__main__":
    main()
