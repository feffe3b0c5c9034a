"""Read a YAML file into plain data plus the line of every key, and turn pydantic errors into file:line errors."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from mobile_agent.errors import ConfigError

Loc = tuple[Any, ...]


@dataclass(frozen=True)
class LineMappedDoc:
    """A YAML document as plain Python data and ``lines[loc]``: the 1-based line where the item at loc starts."""

    path: str
    data: Any
    lines: dict[Loc, int]

    def line_of(self, loc: Loc) -> int:
        """The line of the deepest known item on the way to loc (a missing key reports its parent's line)."""
        for end in range(len(loc), -1, -1):
            line = self.lines.get(tuple(loc[:end]))
            if line is not None:
                return line
        return 1


def load_yaml(path: Path | str) -> LineMappedDoc:
    path = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text ({exc.reason})", "save the file as UTF-8", path=path) from None
    return parse_yaml(text, path)


def parse_yaml(text: str, path: str = "<string>") -> LineMappedDoc:
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return LineMappedDoc(path, None, {(): 1})
        lines: dict[Loc, int] = {(): node.start_mark.line + 1}
        data = _build(loader, node, (), lines, path)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        problem = exc.problem or exc.context or "invalid YAML"
        if exc.context_mark is not None and mark is not None and exc.context_mark.line != mark.line:
            problem += f" ({exc.context} on line {exc.context_mark.line + 1})"
        raise ConfigError(
            f"invalid YAML: {problem}",
            "check indentation, colons and quotes on that line",
            path=path,
            line=line,
        ) from None
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
            key = loader.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
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
