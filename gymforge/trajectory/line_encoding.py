"""One trajectory line's bytes: its canonical JSON with the ``digest`` (and ``seal``) set,
and the bytes the digest chain and the keyed chain cover, from one encoding of the body.
"""

from __future__ import annotations

from typing import Any

from gymforge.core.seeding import canonical_json
from gymforge.trajectory.schema import chain_step
from gymforge.trajectory.seal import seal_step

DIGEST_PLACEHOLDER = "0" * 64
SEAL_PLACEHOLDER = "f" * 64
_DIGEST_MARK = '"digest":"' + DIGEST_PLACEHOLDER + '"'
_SEAL_MARK = '"seal":"' + SEAL_PLACEHOLDER + '"'
_MARK_LEN = len(_DIGEST_MARK)


def chained_line(previous: str, body: dict[str, Any]) -> tuple[str, str]:
    """The digest of ``body`` chained onto ``previous``, and ``body``'s canonical JSON line
    with that digest (a ``digest`` key already in ``body`` is replaced)."""
    digest, _, line = encode_line(previous, body, None, "")
    return digest, line


def encode_line(
    previous: str,
    body: dict[str, Any],
    key: bytes | None,
    previous_seal: str,
    full: str | None = None,
) -> tuple[str, str, str]:
    """``(digest, seal, line)`` of ``body``: the same bytes as ``chain_digest`` (and, with
    ``key``, ``seal_step`` onto ``previous_seal``) followed by ``canonical_json`` of the body
    with its digest (and seal) set, but with the body encoded once: with placeholders in the
    ``digest`` (and ``seal``) slots, which are then cut out (for the bytes the chain covers)
    and filled in (for the line). Without a key the seal returned is ``previous_seal`` and
    the line has none. A body that holds a placeholder entry of its own, deeper down, is
    encoded in parts instead (``_encode_parts``): the cut must find exactly one. ``full``,
    when given, is that encoding with placeholders, already made (``seal_lines``)."""
    if full is None:
        marked = {**body, "digest": DIGEST_PLACEHOLDER}
        if key is None:
            marked.pop("seal", None)
        else:
            marked["seal"] = SEAL_PLACEHOLDER
        full = canonical_json(marked)
    i = full.find(_DIGEST_MARK)  # exactly one: found, and not again after it
    if i < 0 or full.find(_DIGEST_MARK, i + _MARK_LEN) >= 0:
        return _encode_parts(previous, body, key, previous_seal)
    if key is not None and full.count(_SEAL_MARK) != 1:
        return _encode_parts(previous, body, key, previous_seal)
    # canonical JSON sorts keys: full is "{" head-entries "digest" [middle "seal"] tail "}",
    # and every cut piece keeps the commas that separated it from the placeholders
    head, rest = full[:i], full[i + _MARK_LEN :]
    if key is None:  # rest is [",<after>"] "}"
        if i > 1 and len(rest) > 1:  # "{<before>," and ",<after>}": one comma kept
            unsealed = head + rest[1:]
        else:
            unsealed = "{" + ",".join(p for p in (head[1:-1], rest[1:-1]) if p) + "}"
        digest = chain_step(previous, unsealed)
        return digest, previous_seal, f'{head}"digest":"{digest}"{rest}'
    j = rest.index(_SEAL_MARK)  # between is "," or ",<middle>,"; tail is [",<after>"] "}"
    between, tail = rest[:j], rest[j + len(_SEAL_MARK) :]
    pieces = (head[1:-1], between[1:-1], tail[1:-1])
    unsealed = "{" + ",".join(p for p in pieces if p) + "}"
    digest = chain_step(previous, unsealed)
    seal = seal_step(key, previous_seal, unsealed)
    return digest, seal, f'{head}"digest":"{digest}"{between}"seal":"{seal}"{tail}'


def _encode_parts(
    previous: str, body: dict[str, Any], key: bytes | None, previous_seal: str
) -> tuple[str, str, str]:
    """``encode_line`` with the body encoded in parts, for bodies the placeholder cut cannot
    serve; the same bytes. Canonical JSON sorts keys, so the ``digest`` and ``seal`` entries
    sit between the keys sorting around them."""
    before = canonical_json({k: v for k, v in body.items() if k < "digest"})[1:-1]
    if key is None:  # two parts, as the unkeyed chain has always been encoded
        rest = {k: v for k, v in body.items() if k > "digest" and k != "seal"}
        middle, after = canonical_json(rest)[1:-1], ""
    else:
        middle = canonical_json({k: v for k, v in body.items() if "digest" < k < "seal"})[1:-1]
        after = canonical_json({k: v for k, v in body.items() if k > "seal"})[1:-1]
    unsealed = "{" + ",".join(part for part in (before, middle, after) if part) + "}"
    digest = chain_step(previous, unsealed)
    parts = [before, '"digest":"' + digest + '"', middle]
    seal = previous_seal
    if key is not None:
        seal = seal_step(key, previous_seal, unsealed)
        parts.append('"seal":"' + seal + '"')
    parts.append(after)
    return digest, seal, "{" + ",".join(part for part in parts if part) + "}"
