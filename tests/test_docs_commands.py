"""Issue 34, finding 6: every ``gymforge ...`` command line in README.md and docs/*.md uses
only flags its subcommand has.

Command lines are read from fenced code blocks (``$`` prompts and ``\\`` continuations
included) and from inline code spans; each flag (``--name``, ``-x``, ``--name=value``, the
alternatives of ``[--a|--b]``) is looked up in that subcommand's own parser, the one the
CLI runs. A flag the parser does not have is a documented command that fails.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer.main

from gymforge.cli import app

Command = Any  # typer's (vendored) click command: a group has ``commands``

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^\s*(```|~~~)")
SPAN = re.compile(r"``?([^`]+?)``?")
SHELL_END = {"|", "||", "&&", ";", ">", ">>", "2>&1", "&", "#"}


@dataclass(frozen=True)
class Usage:
    where: str
    line: str


def command_lines(path: Path) -> list[Usage]:
    """Every ``gymforge ...`` command line of one Markdown file, with its ``file:line``."""
    found: list[Usage] = []
    fenced = False
    pending = ""
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, raw in enumerate(lines, 1):
        if FENCE.match(raw):
            fenced = not fenced
            continue
        where = f"{path.relative_to(ROOT)}:{number}"
        if fenced:
            text = pending + raw.strip().removeprefix("$ ").strip()
            if text.endswith("\\"):
                pending = text[:-1] + " "
                continue
            pending = ""
            if text.startswith("gymforge "):
                found.append(Usage(where, text))
            continue
        for span in SPAN.findall(raw):
            span = span.strip().removeprefix("$ ")
            if span.startswith("gymforge "):
                found.append(Usage(where, span.replace("\\|", "|")))
    return found


def flags_of(line: str) -> list[str]:
    """The flags a command line uses, in order (up to a pipe, redirection or comment)."""
    out: list[str] = []
    for token in line.split()[1:]:
        if token in SHELL_END or token.startswith("#"):
            break
        for part in token.strip("[](){},.;'\"").split("|"):
            part = part.strip("[](){},.;'\"")
            if re.fullmatch(r"--?[A-Za-z][\w-]*(=.*)?", part):
                out.append(part.split("=", 1)[0])
    return out


def subcommand(root: Command, line: str) -> tuple[Command | None, str]:
    words = line.split()[1:]
    command = root
    name = "gymforge"
    while hasattr(command, "commands") and words and not words[0].startswith("-"):
        found = command.commands.get(words[0])
        if found is None:
            return None, f"{name} {words[0]}"
        name, command, words = f"{name} {words[0]}", found, words[1:]
    return command, name


def options_of(command: Command) -> set[str]:
    names = {"--help"}
    for param in command.params:
        names.update(param.opts)
        names.update(param.secondary_opts)
    return names


ROOT_COMMAND = typer.main.get_command(app)
USAGES = [u for path in DOCS for u in command_lines(path)]


def test_the_docs_have_command_lines_to_check() -> None:
    assert len(USAGES) > 50  # the extraction still finds the documented commands
    assert any(u.where.startswith("docs/architecture.md") for u in USAGES)


@pytest.mark.parametrize("usage", USAGES, ids=lambda u: u.where)
def test_every_documented_flag_exists(usage: Usage) -> None:
    command, name = subcommand(ROOT_COMMAND, usage.line)
    if command is None or command is ROOT_COMMAND:
        first = usage.line.split()[1] if len(usage.line.split()) > 1 else ""
        if re.fullmatch(r"[a-z][a-z-]*", first) and command is None:
            pytest.fail(f"{usage.where}: {usage.line!r}: no command {name!r}")
        return  # prose such as "gymforge ENV ..." or a bare "gymforge --help"
    unknown = [f for f in flags_of(usage.line) if f not in options_of(command)]
    assert not unknown, f"{usage.where}: {usage.line!r}: {name} has no {', '.join(unknown)}"
