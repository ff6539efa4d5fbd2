"""Finding environments by name: built-in ids, import paths, ``reasoning-gym:NAME`` and served
``ws://`` environments, and opening one for a run (``open_env``).

The registry sits below every part that runs environments (rollout, QA, serve, evaluate) and
above only the task and tool layers. It names the modules it loads as strings, so resolving
a built-in id or a ``ws://`` URL imports that module only when it is asked for.
"""

from gymforge.registry.handle import EnvHandle, open_env
from gymforge.registry.resolve import BUILTIN, load_module, make_env, resolve_factory

__all__ = ["BUILTIN", "EnvHandle", "load_module", "make_env", "open_env", "resolve_factory"]
