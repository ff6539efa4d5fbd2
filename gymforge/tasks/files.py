"""Reading the small text files a user hands in (task lists, judge label sets)."""

from __future__ import annotations

from gymforge.core.errors import ConfigError


def utf8_text(raw: bytes, path: object) -> str:
    """``raw`` (the bytes of file ``path``) as text; ConfigError naming the first line that
    is not UTF-8."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: not UTF-8 text") from None
