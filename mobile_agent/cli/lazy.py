"""Command groups whose commands are imported only when one of them runs, completes or shows its own help.

A group lists its commands in a table of :class:`Lazy` entries: where the command lives and the one line `--help`
shows for it. Listing the group (``mobile-agent --help``, a typo's suggestions, completing a command name) reads
the table alone; resolving a command imports its module and builds it with Typer. Importing every command module
cost `run` about a second before its first step (openai, SQLAlchemy, Starlette and the simulator came along).

    class RootCommands(LazyGroup):
        entries = (Lazy("run", "mobile_agent.cli.run:run_command", "Run one task on one phone ..."), ...)

    app = typer.Typer(cls=RootCommands)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from importlib import import_module
from typing import Any, ClassVar

import typer
from typer.core import TyperCommand, TyperGroup


def _flags_without_metavar(params: list[Any]) -> list[Any]:
    """Flags take no value, so their help shows none: typer 0.29 prints ``<bool>`` beside every flag (``--help
    <bool>``) unless the option has a metavar of its own; an empty one shows nothing, as click does for flags."""
    for param in params:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    return params


class QuietCommand(TyperCommand):
    """A command whose flags show no metavar in its help."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _flags_without_metavar(super().get_params(ctx))


class QuietGroup(TyperGroup):
    """A group whose flags show no metavar in its help."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _flags_without_metavar(super().get_params(ctx))


def _quiet(app: typer.Typer) -> typer.Typer:
    """``app`` with its groups and commands, at any depth, built as QuietGroup / QuietCommand (unless one names
    its own class)."""
    if not app.info.cls or app.info.cls is TyperGroup:
        app.info.cls = QuietGroup
    for command in app.registered_commands:
        if not command.cls or command.cls is TyperCommand:
            command.cls = QuietCommand
    for group in app.registered_groups:
        if isinstance(group.typer_instance, typer.Typer):
            _quiet(group.typer_instance)
        if not group.cls or group.cls is TyperGroup:
            group.cls = QuietGroup
    return app


@dataclass(frozen=True)
class Lazy:
    """One command of a group. ``target`` is ``module:attribute``: a command function or a ``typer.Typer``."""

    name: str
    target: str
    summary: str  # the line `--help` lists; a test checks it against the command's own
    help: str | None = None  # the command's help, when it is not the function's docstring
    context_settings: Mapping[str, Any] | None = None

    def load(self) -> Any:
        module, _, attribute = self.target.partition(":")
        found = getattr(import_module(module), attribute)
        if isinstance(found, typer.Typer):
            command: Any = typer.main.get_group(_quiet(found))
            command.help = self.help or self.summary
        else:
            single = typer.Typer(add_completion=False)
            settings = dict(self.context_settings) if self.context_settings else None
            single.command(self.name, cls=QuietCommand, help=self.help, context_settings=settings)(found)
            command = typer.main.get_command(single)
        command.name = self.name
        return command

    def stand_in(self) -> TyperCommand:
        """What a listing needs of the command (name and line), without importing it."""
        return TyperCommand(self.name, help=self.summary, short_help=self.summary)


class LazyCommands(MutableMapping[str, Any]):
    """name -> command, built on first access; the keys come from the table (plus any added eagerly)."""

    def __init__(self, entries: tuple[Lazy, ...], eager: Mapping[str, Any]) -> None:
        self._entries = {entry.name: entry for entry in entries}
        self._built: dict[str, Any] = dict(eager)
        self._order = [*self._entries, *(name for name in eager if name not in self._entries)]

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            self._built[name] = self._entries[name].load()  # KeyError for an unknown name, as a dict
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        if name not in self._order:
            self._order.append(name)
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        if name not in self._order:
            raise KeyError(name)
        self._order.remove(name)
        self._built.pop(name, None)
        self._entries.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._order))

    def __len__(self) -> int:
        return len(self._order)

    def stand_in(self, name: str) -> Any:
        """The built command when there is one, else the table's stand-in; None for an unknown name."""
        if name in self._built:
            return self._built[name]
        entry = self._entries.get(name)
        return entry.stand_in() if entry is not None else None


class LazyGroup(QuietGroup):
    """A Typer group over a table of commands; subclasses set ``entries``."""

    entries: ClassVar[tuple[Lazy, ...]] = ()

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.commands = LazyCommands(self.entries, self.commands)
        self._listing = False

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if self._listing:
            return self.commands.stand_in(cmd_name)
        return self.commands.get(cmd_name)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False

    def shell_complete(self, ctx: Any, incomplete: str) -> list[Any]:
        self._listing = True  # completing a command name needs the names and lines only
        try:
            return super().shell_complete(ctx, incomplete)
        finally:
            self._listing = False


__all__ = ["Lazy", "LazyCommands", "LazyGroup", "QuietCommand", "QuietGroup"]
