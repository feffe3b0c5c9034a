"""Read a YAML file into plain data plus the line of every key, and turn pydantic errors into file:line errors.

The one YAML reader of the project (manifests, task files, devices.yaml, scenarios, model scripts): it bounds what
a file may cost before anything is built from it, so a hostile or broken file is a one-line ConfigError, never a
MemoryError or RecursionError: at most ``MAX_YAML_BYTES`` of text, ``MAX_DEPTH`` levels of nesting,
``MAX_ALIASES`` aliases, ``MAX_NODES`` nodes once aliases are expanded (a "billion laughs" file has few aliases and
a huge expansion), and no alias that refers to its own ancestor.
"""

from __future__ import annotations

from collections.abc import Hashable
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from mobile_agent.apps.linemap import LineMappedDoc, Loc
from mobile_agent.errors import ConfigError

MAX_YAML_BYTES = 32 * 1024 * 1024
MAX_DEPTH = 64
MAX_ALIASES = 1000
MAX_NODES = 2_000_000
LIMIT_HINT = "this file is larger or deeper than any configuration needs; write the items out plainly"


class _LimitReached(Exception):
    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.line = line


try:  # libyaml's scanner and parser are C, ~7x faster than PyYAML's (the manifests cost `run` ~60 ms otherwise)
    from yaml.cyaml import CParser
except ImportError:  # pragma: no cover - a PyYAML built without libyaml
    _SafeLoader: type = yaml.SafeLoader
else:

    class _SafeLoader(
        yaml.composer.Composer, CParser, yaml.constructor.SafeConstructor, yaml.resolver.Resolver
    ):
        """PyYAML's safe loader on libyaml's events; the composer stays PyYAML's, so the limits below apply."""

        def __init__(self, text: str) -> None:
            CParser.__init__(self, text)
            yaml.composer.Composer.__init__(self)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)


class LimitedLoader(_SafeLoader):
    """PyYAML's safe loader that counts nesting depth and aliases while it composes."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self._depth = 0
        self._aliases = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        line = self.peek_event().start_mark.line + 1
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise _LimitReached(f"more than {MAX_ALIASES} aliases (*name)", line)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _LimitReached(f"nested deeper than {MAX_DEPTH} levels", line)
            return super().compose_node(parent, index)  # type: ignore[misc]
        finally:
            self._depth -= 1


def _expanded_size(root: yaml.Node) -> None:
    """Raise _LimitReached when the node graph, aliases expanded, is too big or refers to itself."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: yaml.Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_nodes:
            raise _LimitReached("an alias refers to a node that contains it", node.start_mark.line + 1)
        open_nodes.add(key)
        total = 1
        if isinstance(node, yaml.MappingNode):
            total += sum(size(k) + size(v) for k, v in node.value)
        elif isinstance(node, yaml.SequenceNode):
            total += sum(size(item) for item in node.value)
        if total > MAX_NODES:
            raise _LimitReached(
                f"more than {MAX_NODES} values once aliases are expanded", node.start_mark.line + 1
            )
        open_nodes.discard(key)
        sizes[key] = total
        return total

    size(root)


def compose_yaml(text: str, path: str) -> tuple[LimitedLoader, yaml.Node | None]:
    """The single document of ``text`` as a node graph, within the limits; the loader is for constructing it
    (call ``dispose`` when done). ConfigError naming ``path`` and the line for bad YAML or a limit reached."""
    if len(text) > MAX_YAML_BYTES:
        raise ConfigError(f"the file is over {MAX_YAML_BYTES // (1024 * 1024)} MiB", LIMIT_HINT, path=path)
    loader = LimitedLoader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            _expanded_size(node)
    except _LimitReached as exc:
        loader.dispose()
        raise ConfigError(f"YAML refused: {exc}", LIMIT_HINT, path=path, line=exc.line) from None
    except RecursionError:  # a limit above should come first; this is the backstop
        loader.dispose()
        raise ConfigError("YAML nested too deeply", LIMIT_HINT, path=path) from None
    except yaml.MarkedYAMLError as exc:
        loader.dispose()
        raise _syntax_error(exc, path) from None
    except yaml.YAMLError as exc:
        loader.dispose()
        raise ConfigError(f"invalid YAML: {exc}", "check the file's syntax", path=path) from None
    return loader, node


def _syntax_error(exc: yaml.MarkedYAMLError, path: str) -> ConfigError:
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + 1 if mark else None
    problem = exc.problem or exc.context or "invalid YAML"
    if exc.context_mark is not None and mark is not None and exc.context_mark.line != mark.line:
        problem += f" ({exc.context} on line {exc.context_mark.line + 1})"
    return ConfigError(
        f"invalid YAML: {problem}", "check indentation, colons and quotes on that line", path=path, line=line
    )


def load_yaml(path: Path | str) -> LineMappedDoc:
    path = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text ({exc.reason})", "save the file as UTF-8", path=path) from None
    return parse_yaml(text, path)


def parse_yaml(text: str, path: str = "<string>") -> LineMappedDoc:
    loader, node = compose_yaml(text, path)
    try:
        if node is None:
            return LineMappedDoc(path, None, {(): 1})
        lines: dict[Loc, int] = {(): node.start_mark.line + 1}
        data = _build(loader, node, (), lines, path)
    except yaml.MarkedYAMLError as exc:
        raise _syntax_error(exc, path) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML: {exc}", "check the file's syntax", path=path) from None
    finally:
        loader.dispose()
    return LineMappedDoc(path, data, lines)


def _build(loader: yaml.SafeLoader, node: yaml.Node, loc: Loc, lines: dict[Loc, int], path: str) -> Any:
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)  # resolves YAML merge keys (<<)
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            line = key_node.start_mark.line + 1
            if not isinstance(key_node, yaml.ScalarNode):
                raise ConfigError("a mapping key must be a plain value", path=path, line=line)
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, Hashable):
                raise ConfigError("a mapping key must be a plain value", path=path, line=line)
            if key in out:
                raise ConfigError(
                    f"duplicate key {key!r}",
                    f"the key already appears on line {lines[(*loc, key)]}; keep one",
                    path=path,
                    line=line,
                )
            lines[(*loc, key)] = line
            out[key] = _build(loader, value_node, (*loc, key), lines, path)
        return out
    if isinstance(node, yaml.SequenceNode):
        items = []
        for index, item_node in enumerate(node.value):
            lines[(*loc, index)] = item_node.start_mark.line + 1
            items.append(_build(loader, item_node, (*loc, index), lines, path))
        return items
    return loader.construct_object(node, deep=True)


def validate(model: type[BaseModel], doc: LineMappedDoc) -> BaseModel:
    """Validate doc against model; the first problem becomes a ConfigError naming file, line and field."""
    if not isinstance(doc.data, dict):
        raise ConfigError(
            "expected a mapping of fields (id, name, package, ...)",
            "see apps/wechat.yaml for the layout of a manifest",
            path=doc.path,
            line=1,
        )
    try:
        return model.model_validate(doc.data)
    except ValidationError as exc:
        raise validation_error_to_config_error(exc, doc) from None


def validation_error_to_config_error(exc: ValidationError, doc: LineMappedDoc) -> ConfigError:
    errors = exc.errors(include_url=False)
    # Unions report one error per member; the most specific one (longest path) on the earliest line reads best.
    first = min(errors, key=lambda e: (doc.line_of(_data_loc(e["loc"])), -len(e["loc"])))
    loc = _data_loc(first["loc"])
    field = _dotted(loc)
    more = (
        f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''} in this file)"
        if len(errors) > 1
        else ""
    )
    kind = first["type"]
    if kind == "extra_forbidden":
        message = f"unknown key {field!r}"
        hint = f"remove it or check its spelling; allowed keys here: {_allowed_keys(exc, loc)}"
    elif kind == "missing":
        message = f"missing required key {field!r}"
        hint = "add it"
    else:
        message = f"{field or 'manifest'}: {first['msg'].removeprefix('Value error, ')}"
        hint = "fix the value; see apps/wechat.yaml for a complete example"
    return ConfigError(message + more, hint, path=doc.path, line=doc.line_of(loc))


def _data_loc(loc: Loc) -> Loc:
    """Drop pydantic's union-member tags ("literal['matched']", "ElementSelector") so loc follows the YAML."""
    return tuple(item for item in loc if isinstance(item, int) or (item[:1].islower() and "[" not in item))


def _dotted(loc: Loc) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            parts.append(("." if parts else "") + str(item))
    return "".join(parts)


def _allowed_keys(exc: ValidationError, loc: Loc) -> str:
    """Field names of the model that holds loc's parent; best effort (unions name several models)."""
    model: Any = _model_of(exc)
    for item in loc[:-1]:
        if model is None:
            break
        if isinstance(item, int):
            continue
        field = model.model_fields.get(item)
        model = _inner_model(field.annotation) if field else None
    return ", ".join(model.model_fields) if model is not None else "see the manifest schema"


def _model_of(exc: ValidationError) -> Any:
    from mobile_agent.apps import schema

    return getattr(schema, exc.title, None)


def _inner_model(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None
