"""Type hints to JSON Schema (draft 2020-12), and JSON values checked and
converted against the same hints.

`shape_of(hint)` compiles a type hint once into a `Shape`, which answers
both questions: its schema (`schema(defs)`) and a JSON value converted to
the Python value the hint names (`convert(value, path)`), raising
`InvalidArguments` that names the offending field (`filters[2].tag: expected
a string, got 3`). `strict=False` lets objects carry fields the hint does
not name (a backend's rows), as serde does without `deny_unknown_fields`. The SDK compiles every tool's hints when its module is
imported, which componentize-py does at build time: an unsupported hint
fails the build, not a call.

Supported hints:

| hint | schema | converts |
|---|---|---|
| `str`, `bool` | `string`, `boolean` | strictly (no coercion) |
| `int` | `integer` | an integer, or a float with no fraction |
| `float` | `number` | any number, to `float` |
| `list[T]` | `array` of T | each item |
| `dict[str, T]`, `dict` | `object` of T | each value |
| `T \\| None`, `Optional[T]` | T or `null` | `None` stays `None` |
| `A \\| B` (`NameOrId` = `str \\| int`) | `anyOf` | the first member that fits |
| `Literal["a", "b"]` | `enum` | equal value and type |
| an `Enum` subclass | `enum` of its values, in `$defs` | to the member |
| a dataclass | `object`, in `$defs`, no extra fields | to an instance |
| `Any` | `{}` | as is |
| `Annotated[T, "text"]` | T with `description` | as T |

A field's description comes from `Annotated[T, "text"]`, else
`field(metadata={"description": "text"})`, else the owner's docstring
(`Args:` of a function, `Attributes:` of a dataclass, Google style).
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import inspect
import json
import re
import types
import typing
from typing import Any

from .errors import InvalidArguments

#: The `$schema` of every root schema.
DIALECT = "https://json-schema.org/draft/2020-12/schema"

#: How much of a bad value an error message quotes.
QUOTE_CHARS = 40

_MISSING: Any = dataclasses.MISSING


class Shape:
    """A compiled type hint: its schema and its converter."""

    #: How an error names what was expected: "a string".
    expected = "a value"
    #: The JSON kinds it may accept (`str`, `int`, `float`, `bool`, `null`,
    #: `list`, `dict`), for telling union members apart.
    kinds: frozenset[str] = frozenset()

    def schema(self, defs: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def convert(self, value: Any, path: str, strict: bool = True) -> Any:
        raise NotImplementedError

    def refuse(self, value: Any, path: str) -> InvalidArguments:
        return InvalidArguments(f"{path}: expected {self.expected}, got {quote(value)}")


class Primitive(Shape):
    """`str`, `int`, `float`, `bool` or `None`."""

    def __init__(self, py: type, json_type: str, expected: str, kinds: set[str]) -> None:
        self.py, self.json_type, self.expected, self.kinds = py, json_type, expected, frozenset(kinds)

    def schema(self, defs):
        return {"type": self.json_type}

    def convert(self, value, path, strict=True):
        kind = kind_of(value)
        if kind not in self.kinds:
            raise self.refuse(value, path)
        if self.py is int and kind == "float":
            if not value.is_integer():
                raise self.refuse(value, path)
            return int(value)
        if self.py is float:
            return float(value)
        return value


STR = Primitive(str, "string", "a string", {"str"})
INT = Primitive(int, "integer", "an integer", {"int", "float"})
FLOAT = Primitive(float, "number", "a number", {"int", "float"})
BOOL = Primitive(bool, "boolean", "a boolean", {"bool"})
NULL = Primitive(type(None), "null", "null", {"null"})


class AnyShape(Shape):
    """`Any`: every JSON value, unchecked."""

    expected = "any value"
    kinds = frozenset({"str", "int", "float", "bool", "null", "list", "dict"})

    def schema(self, defs):
        return {}

    def convert(self, value, path, strict=True):
        return value


class ListShape(Shape):
    """`list[T]`."""

    expected = "an array"
    kinds = frozenset({"list"})

    def __init__(self, item: Shape) -> None:
        self.item = item

    def schema(self, defs):
        return {"type": "array", "items": self.item.schema(defs)}

    def convert(self, value, path, strict=True):
        if not isinstance(value, list):
            raise self.refuse(value, path)
        return [self.item.convert(v, f"{path}[{i}]", strict) for i, v in enumerate(value)]


class DictShape(Shape):
    """`dict[str, T]` (or a bare `dict`: any values)."""

    expected = "an object"
    kinds = frozenset({"dict"})

    def __init__(self, value: Shape) -> None:
        self.value = value

    def schema(self, defs):
        values = self.value.schema(defs)
        return {"type": "object", **({"additionalProperties": values} if values else {})}

    def convert(self, value, path, strict=True):
        if not isinstance(value, dict):
            raise self.refuse(value, path)
        return {k: self.value.convert(v, f"{path}[{json.dumps(k)}]", strict) for k, v in value.items()}


class LiteralShape(Shape):
    """`Literal[...]` of strings, integers, booleans or None."""

    def __init__(self, values: tuple[Any, ...]) -> None:
        for v in values:
            if v is not None and not isinstance(v, (str, int)):
                raise TypeError(f"Literal values must be str, int, bool or None, not {v!r}")
        self.values = values
        self.kinds = frozenset(kind_of(v) for v in values)
        self.expected = "one of " + ", ".join(json.dumps(v) for v in values)

    def schema(self, defs):
        types_ = sorted({_JSON_TYPE[kind_of(v)] for v in self.values})
        return {"type": types_[0], "enum": list(self.values)} if len(types_) == 1 else {"enum": list(self.values)}

    def convert(self, value, path, strict=True):
        for v in self.values:
            if kind_of(v) == kind_of(value) and v == value:
                return v
        raise self.refuse(value, path)


class EnumShape(Shape):
    """An `Enum` subclass whose values are strings or integers."""

    def __init__(self, cls: type[enum.Enum]) -> None:
        self.cls, self.members = cls, list(cls)
        self.literal = LiteralShape(tuple(m.value for m in self.members))
        self.kinds, self.expected = self.literal.kinds, self.literal.expected

    def schema(self, defs):
        return define(defs, self.cls, lambda: described(self.literal.schema(defs), own_doc(self.cls)))

    def convert(self, value, path, strict=True):
        v = self.literal.convert(value, path, strict)
        return next(m for m in self.members if m.value == v and kind_of(m.value) == kind_of(v))


class UnionShape(Shape):
    """`A | B | …`, `Optional[T]`: the first member that fits."""

    def __init__(self, members: list[Shape]) -> None:
        self.members = members
        self.kinds = frozenset().union(*(m.kinds for m in members))
        self.expected = " or ".join(m.expected for m in members)

    def schema(self, defs):
        schemas = [m.schema(defs) for m in self.members]
        first = schemas[0]
        if len(schemas) == 2 and schemas[1] == {"type": "null"} and set(first) == {"type"}:
            return {"type": [first["type"], "null"]}  # as schemars writes `Option<String>`
        return {"anyOf": schemas}

    def convert(self, value, path, strict=True):
        fitting = [m for m in self.members if kind_of(value) in m.kinds]
        for m in fitting:
            try:
                return m.convert(value, path, strict)
            except InvalidArguments as e:
                # The one member the value could be, wrong deeper down: say where.
                if len(fitting) == 1 and not e.message.startswith(f"{path}: expected"):
                    raise e from None
        raise self.refuse(value, path)


class Field:
    """One property of an object: a dataclass field or a tool argument.
    Without `default` nor `factory` it is required."""

    def __init__(self, name: str, shape: Shape, description: str | None, default: Any = _MISSING, factory: Any = None) -> None:
        self.name, self.shape, self.description = name, shape, description
        self.default, self.factory = default, factory

    @property
    def required(self) -> bool:
        return self.default is _MISSING and self.factory is None

    def fill(self) -> Any:
        """The value of an omitted field: a fresh copy of its default."""
        return self.factory() if self.factory is not None else copy.deepcopy(self.default)

    def schema(self, defs: dict[str, Any]) -> dict[str, Any]:
        s = described(dict(self.shape.schema(defs)), self.description)
        default = None if self.required else self.fill()
        if default is not None:
            try:
                s["default"] = json.loads(json.dumps(to_json(default), allow_nan=False))
            except (TypeError, ValueError):
                pass  # a default JSON cannot show is still a default
        return s


class ObjectShape(Shape):
    """A JSON object with known properties and no others: a dataclass, or
    a tool's arguments. `build(**fields)` makes the Python value."""

    expected = "an object"
    kinds = frozenset({"dict"})

    def __init__(self, title: str, description: str | None, fields: list[Field], build: Any, cls: type | None = None):
        self.title, self.description, self.fields, self.build, self.cls = title, description, fields, build, cls

    def schema(self, defs):
        if self.cls is None:
            return self.body(defs)
        return define(defs, self.cls, lambda: self.body(defs))

    def body(self, defs: dict[str, Any]) -> dict[str, Any]:
        s: dict[str, Any] = {"title": self.title, "type": "object"}
        described(s, self.description)
        s["properties"] = {f.name: f.schema(defs) for f in self.fields}
        s["required"] = [f.name for f in self.fields if f.required]
        s["additionalProperties"] = False
        return s

    def convert(self, value, path, strict=True):
        if not isinstance(value, dict):
            raise self.refuse(value, path)
        known = {f.name for f in self.fields}
        for key in value:
            if strict and key not in known:
                names = ", ".join(f.name for f in self.fields) or "none"
                raise InvalidArguments(f"unknown field {json.dumps(join(path, key))} (expected one of: {names})")
        out = {}
        for f in self.fields:
            if f.name in value:
                out[f.name] = f.shape.convert(value[f.name], join(path, f.name), strict)
            elif not f.required:
                out[f.name] = f.fill()
            else:
                raise InvalidArguments(f"missing required field {json.dumps(join(path, f.name))}")
        return self.build(**out)


def shape_of(hint: Any) -> Shape:
    """The shape of one type hint (compiled once per hint); `TypeError`
    for a hint it cannot check."""
    try:
        cached = _SHAPES.get(hint)
    except TypeError:  # an unhashable hint (Literal of a list): compile it every time
        cached = None
    if cached is None:
        cached, _ = _described_shape(hint)
        try:
            _SHAPES[hint] = cached
        except TypeError:
            pass
    return cached


# Hints compiled so far (a backend answer's hint is compiled on first use).
_SHAPES: dict[Any, Shape] = {}


def _described_shape(hint: Any) -> tuple[Shape, str | None]:
    """The shape of `hint` and the description an `Annotated` gave it."""
    if typing.get_origin(hint) is typing.Annotated:
        shape, inner = _described_shape(hint.__origin__)
        text = next((m for m in hint.__metadata__ if isinstance(m, str)), None)
        return shape, text or inner
    return _shape(hint), None


def _shape(hint: Any) -> Shape:
    prim = {str: STR, int: INT, float: FLOAT, bool: BOOL, type(None): NULL, None: NULL}
    if hint in prim:
        return prim[hint]
    if hint is Any or hint is object:
        return AnyShape()
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        members = [shape_of(a) for a in args if a is not type(None)]
        return UnionShape(members + ([NULL] if type(None) in args else []))
    if origin is typing.Literal:
        return LiteralShape(args)
    if hint is list or origin is list:
        return ListShape(shape_of(args[0]) if args else AnyShape())
    if hint is dict or origin is dict:
        if args and args[0] is not str:
            raise TypeError(f"{_name(hint)}: JSON object keys are strings: use dict[str, T]")
        return DictShape(shape_of(args[1]) if args else AnyShape())
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return EnumShape(hint)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return dataclass_shape(hint)
    raise TypeError(f"the type hint {_name(hint)} has no JSON Schema here (see toolhost_sdk.schema)")


# Dataclasses compiled so far, so that a recursive one refers to itself.
_DATACLASSES: dict[type, ObjectShape] = {}


def dataclass_shape(cls: type) -> ObjectShape:
    """The shape of a dataclass: its fields (hints, defaults, descriptions)."""
    if cls in _DATACLASSES:
        return _DATACLASSES[cls]
    shape = ObjectShape(cls.__name__, own_doc(cls), [], cls, cls)
    _DATACLASSES[cls] = shape
    try:
        hints = typing.get_type_hints(cls, include_extras=True)
        docs = sections(cls.__doc__).get("attributes", {})
        for f in dataclasses.fields(cls):
            if not f.init:
                continue
            sub, text = _described_shape(hints[f.name])
            factory = None if f.default_factory is _MISSING else f.default_factory
            default = None if f.default is _MISSING and factory is None and _nullable(sub) else f.default
            description = text or f.metadata.get("description") or docs.get(f.name)
            shape.fields.append(Field(f.name, sub, description, default, factory))
    except Exception:
        del _DATACLASSES[cls]
        raise
    return shape


def params_shape(title: str, params: list[inspect.Parameter], hints: dict[str, Any], docs: dict[str, str]) -> ObjectShape:
    """The shape of a tool's arguments: one field per parameter. A
    parameter without a default is required unless its hint admits None."""
    fields = []
    for p in params:
        if p.name not in hints:
            raise TypeError(f"argument {p.name!r} has no type hint")
        sub, text = _described_shape(hints[p.name])
        default = p.default if p.default is not inspect.Parameter.empty else _MISSING
        if default is _MISSING and _nullable(sub):
            default = None
        fields.append(Field(p.name, sub, text or docs.get(p.name), default))
    return ObjectShape(title, None, fields, dict)


def root_schema(shape: Shape) -> str:
    """`shape`'s schema as a root document (its `$defs` alongside), as JSON text."""
    defs = Defs()
    body = shape.body(defs) if isinstance(shape, ObjectShape) else shape.schema(defs)
    doc = {"$schema": DIALECT, **body}
    if defs:
        doc["$defs"] = defs
    return json.dumps(doc, ensure_ascii=False)


class Defs(dict):
    """A root schema's `$defs`, remembering which class each name stands
    for: two classes of one name in one schema are refused."""

    def __init__(self) -> None:
        super().__init__()
        self.owners: dict[str, type] = {}


def define(defs: Defs, cls: type, body: Any) -> dict[str, Any]:
    """A `$ref` to `cls` in `defs`, defining it (with `body()`) on first use."""
    name = cls.__name__
    owner = defs.owners.setdefault(name, cls)
    if owner is not cls:
        raise TypeError(f"two types named {name} in one schema ({owner.__module__} and {cls.__module__}): rename one")
    if name not in defs:
        defs[name] = {}  # a recursive reference finds it while the body is built
        defs[name] = body()
    return {"$ref": f"#/$defs/{name}"}


def described(schema: dict[str, Any], text: str | None) -> dict[str, Any]:
    """`schema` with `description` set to `text` when there is one."""
    if text:
        schema["description"] = text
    return schema


def to_json(value: Any) -> Any:
    """A tool's answer as plain JSON values: dataclasses to objects (every
    field), enums to their values, tuples to arrays. `TypeError` for what
    JSON cannot hold."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, enum.Enum):
        return to_json(value.value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        for k in value:
            if not isinstance(k, str):
                raise TypeError(f"an object key must be a string, not {k!r}")
        return {k: to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    raise TypeError(f"{type(value).__name__} is not JSON: answer dicts, lists, dataclasses, str, int, float, bool or None")


def kind_of(value: Any) -> str:
    """The JSON kind of a parsed value (`bool` apart from `int`)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    for py, kind in ((int, "int"), (float, "float"), (str, "str"), (list, "list"), (dict, "dict")):
        if isinstance(value, py):
            return kind
    return type(value).__name__


def quote(value: Any) -> str:
    """A bad value, short, for an error message."""
    kind = kind_of(value)
    if kind == "list":
        return "an array"
    if kind == "dict":
        return "an object"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 1] + "…"


def join(path: str, key: str) -> str:
    """The path of `key` under `path` (the root's path is empty)."""
    return f"{path}.{key}" if path else key


def own_doc(cls: type) -> str | None:
    """The summary of a class's own docstring (not the one dataclass or
    Enum writes for it)."""
    doc = cls.__dict__.get("__doc__")
    if not doc or doc.startswith(f"{cls.__name__}(") or doc in (enum.Enum.__doc__, "An enumeration."):
        return None
    return summary(doc)


_SECTION = re.compile(r"^(Args|Arguments|Parameters|Attributes|Returns|Raises|Yields|Examples?|Notes?):\s*$")
_SECTION_KEY = {"Args": "args", "Arguments": "args", "Parameters": "args", "Attributes": "attributes"}
_ENTRY = re.compile(r"^(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")


def summary(doc: str | None) -> str | None:
    """A docstring's text before its first section, paragraphs kept."""
    if not doc:
        return None
    lines = []
    for line in inspect.cleandoc(doc).splitlines():
        if _SECTION.match(line.strip()):
            break
        lines.append(line.strip())
    paragraphs = [" ".join(p.split("\n")).strip() for p in "\n".join(lines).split("\n\n")]
    text = "\n\n".join(p for p in paragraphs if p)
    return text or None


def sections(doc: str | None) -> dict[str, dict[str, str]]:
    """A Google-style docstring's entries by section (lower-cased) and
    name: `{"args": {"name": "Who to greet."}}`."""
    out: dict[str, dict[str, str]] = {}
    if not doc:
        return out
    current: dict[str, str] | None = None
    name = None
    indent = None
    for raw in inspect.cleandoc(doc).splitlines():
        line = raw.strip()
        m = _SECTION.match(line) if raw == raw.lstrip() else None
        if m:
            current, name, indent = out.setdefault(_SECTION_KEY.get(m.group(1), "other"), {}), None, None
            continue
        if current is None or not line:
            continue
        depth = len(raw) - len(raw.lstrip())
        entry = _ENTRY.match(line)
        if entry and (indent is None or depth <= indent):
            indent, name = depth, entry.group(1).lstrip("*")
            current[name] = entry.group(3).strip()
        elif name is not None:
            current[name] = f"{current[name]} {line}".strip()
    return out


def _nullable(shape: Shape) -> bool:
    return "null" in shape.kinds and not isinstance(shape, AnyShape)


def _name(hint: Any) -> str:
    return getattr(hint, "__name__", None) or repr(hint)


_JSON_TYPE = {"str": "string", "int": "integer", "bool": "boolean", "null": "null", "float": "number"}
