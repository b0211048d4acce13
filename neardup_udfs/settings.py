"""One declaration per configuration key, and everything derived from it.

A job's settings are a frozen dataclass whose fields are declared with :func:`setting`: the
field's type hint is the key's type, its default the key's default, and the declaration
holds the rest (meaning, unit, allowed values, bounds, deprecated old names). From that one
declaration come

- the TOML loader (:func:`load`): unknown keys and wrong types refused, old names accepted
  with a :class:`DeprecatedKey` warning;
- the job's flags (:func:`add_arguments`): ``--key-name``, typed, with choices and help;
- the key tables of docs/configuration.md (:func:`key_table`, :func:`render_tables`);
- the per-key checks (:func:`check`), which the config classes run in ``__post_init__``, so
  every way of making a config (the loader, the constructor, ``dataclasses.replace``)
  passes through them.
"""

from __future__ import annotations

import argparse
import re
import tomllib
import warnings
from collections.abc import Mapping
from dataclasses import MISSING, Field, dataclass, field, fields
from functools import cache
from types import UnionType
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

__all__ = [
    "ConfigError",
    "DeprecatedKey",
    "Key",
    "Setting",
    "add_arguments",
    "check",
    "comma_list",
    "default_text",
    "fail",
    "flag_of",
    "key_table",
    "keys_of",
    "load",
    "own_keys",
    "render_tables",
    "setting",
]

C = TypeVar("C")

SETTING = "neardup.setting"  # the dataclass field metadata entry holding a key's Setting


class ConfigError(ValueError):
    """An invalid or inconsistent setting; the message names the key."""


class DeprecatedKey(FutureWarning):
    """A key or flag was given by its old name: it still works, for one release."""


def fail(key: str, message: str) -> ConfigError:
    """The error for key ``key``: ``config key 'key': message``."""
    return ConfigError(f"config key {key!r}: {message}")


@dataclass(frozen=True)
class Setting:
    """What a key's type hint and default do not say."""

    help: str  # what the key means (the flag's help, the key table's "what")
    unit: str = ""  # bytes, bits, documents, ...
    unset: str = ""  # an optional key left out: what is used instead
    choices: tuple[str, ...] = ()  # a string key: one of these; a list key: each item
    minimum: float | None = None  # inclusive bounds of a number
    maximum: float | None = None
    above: float | None = None  # exclusive bounds of a number
    below: float | None = None
    required: str = ""  # what must be given ("an input path"): an empty value is an error
    unless: str = ""  # a required key may be left empty when this other key is set
    nonempty: bool = False  # a list key needs at least one item
    aliases: tuple[str, ...] = ()  # old names, read with a DeprecatedKey warning
    flag: bool = True  # False: a TOML key only (a table)


def setting(default: Any, help: str, **declared: Any) -> Any:
    """A config dataclass field: ``default`` and a :class:`Setting` of ``help`` and
    ``declared`` (a dict default becomes a fresh dict per instance)."""
    meta = {SETTING: Setting(help, **declared)}
    if isinstance(default, dict):
        return field(default_factory=lambda: dict(default), metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class Key:
    """A declared key of a config class: its name, type hint, default and declaration."""

    name: str
    hint: Any
    default: Any
    setting: Setting

    @property
    def types(self) -> tuple[type, ...]:
        """The runtime types a value may have (an int where a float is declared, a list
        where a tuple is; None is not among them)."""
        return _expected_types(self.hint)

    @property
    def optional(self) -> bool:
        args = get_args(self.hint) if get_origin(self.hint) in (Union, UnionType) else ()
        return type(None) in args


def keys_of(cls: type) -> tuple[Key, ...]:
    """Every declared key of the config class ``cls``, in field order."""
    return _keys_of(cls)


@cache
def _keys_of(cls: Any) -> tuple[Key, ...]:
    hints = get_type_hints(cls)
    out = []
    for f in fields(cls):
        if SETTING not in f.metadata:
            raise TypeError(f"{cls.__name__}.{f.name} is not declared with settings.setting")
        out.append(Key(f.name, hints[f.name], _default(f), f.metadata[SETTING]))
    return tuple(out)


def own_keys(cls: type) -> tuple[Key, ...]:
    """The keys ``cls`` declares itself (not those it inherits unchanged)."""
    own = cls.__dict__.get("__annotations__", {})
    return tuple(k for k in keys_of(cls) if k.name in own)


def _default(f: Field[Any]) -> Any:
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    raise TypeError(f"config key {f.name!r} has no default")


def _expected_types(hint: Any) -> tuple[type, ...]:
    args = get_args(hint) if get_origin(hint) in (Union, UnionType) else (hint,)
    out: list[type] = []
    for arg in args:
        if arg is type(None):
            continue
        origin = get_origin(arg) or arg
        if origin is float:
            out += [float, int]
        elif origin is tuple:
            out += [tuple, list]
        else:
            out.append(origin)
    return tuple(out)


def check(config: Any) -> None:
    """Each declared key of ``config`` against its declaration: type, required, choices,
    bounds, at least one item (a list becomes a tuple).

    Raises:
        ConfigError: the first key at fault, named in the message.
    """
    for key in keys_of(type(config)):
        value = getattr(config, key.name)
        if isinstance(value, list):
            value = tuple(value)
            object.__setattr__(config, key.name, value)
        other = key.setting.unless
        if other and not value and getattr(config, other, None):
            continue  # given another way
        _check_value(key, value)


def _check_value(key: Key, value: Any) -> None:
    s, name = key.setting, key.name
    if value is None and key.optional:
        return
    _check_type(key, value)
    if s.required and not value:
        raise fail(name, f"{s.required} is required")
    for item in value if isinstance(value, tuple) else (value,):
        if s.choices and item not in s.choices:
            raise fail(name, f"{item!r} is not one of {', '.join(s.choices)}")
    if s.nonempty and not value:
        raise fail(name, "name at least one item")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        _check_bounds(key, value)


def _check_bounds(key: Key, value: float) -> None:
    s = key.setting
    if s.minimum == 1 and s.maximum is None and value < 1 and float(value).is_integer():
        raise fail(key.name, f"must be a positive integer, got {value!r}")
    low_ok = (s.minimum is None or value >= s.minimum) and (s.above is None or value > s.above)
    high_ok = (s.maximum is None or value <= s.maximum) and (s.below is None or value < s.below)
    if not (low_ok and high_ok):
        raise fail(key.name, f"must be {_range_text(s)}, got {value!r}")


def _range_text(s: Setting) -> str:
    low = f"[{_num(s.minimum)}" if s.minimum is not None else f"({_num(s.above)}"
    if s.minimum is None and s.above is None:
        return f"<= {_num(s.maximum)}" if s.maximum is not None else f"< {_num(s.below)}"
    if s.maximum is None and s.below is None:
        return f">= {_num(s.minimum)}" if s.minimum is not None else f"> {_num(s.above)}"
    high = f"{_num(s.maximum)}]" if s.maximum is not None else f"{_num(s.below)})"
    return f"in {low}, {high}"


def _num(x: float | None) -> str:
    return str(int(x)) if x is not None and float(x).is_integer() else str(x)


def _aliases(cls: type) -> dict[str, str]:
    return {old: k.name for k in keys_of(cls) for old in k.setting.aliases}


def _renamed(cls: type, values: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``values`` with every old key name replaced by its new one (a DeprecatedKey warning
    each); ConfigError when both names are given."""
    aliases = _aliases(cls)
    out: dict[str, Any] = {}
    for name, value in values.items():
        new = aliases.get(name)
        if new is None:
            out[name] = value
            continue
        if new in values:
            raise fail(new, f"given twice, as {new!r} and by its old name {name!r} ({where})")
        warnings.warn(
            f"config key {name!r} ({flag_of(name)}) is deprecated: use {new!r} "
            f"({flag_of(new)}); the old name is read for one more release",
            DeprecatedKey,
            stacklevel=3,
        )
        out[new] = value
    return out


def read_toml(path: str) -> dict[str, Any]:
    """The TOML file ``path`` as a dict; ConfigError naming the file if it cannot be read."""
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as e:
        raise ConfigError(f"cannot read config file {path!r}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"config file {path!r} is not valid TOML: {e}") from None


def load(cls: type[C], path: str | None = None, **overrides: Any) -> C:
    """An instance of the config class ``cls``: its defaults, then the TOML file ``path``
    (if any), then ``overrides`` (``None`` = unset), checked by the class's ``__post_init__``.
    Old key names are read as their new ones, with a :class:`DeprecatedKey` warning. A class
    that reads another job's file (``cls.shares_file_with``) leaves that job's own keys in
    the file to it, once each is valid by its declaration.

    Raises:
        ConfigError: an unreadable or invalid file, an unknown key, a value of the wrong type,
            or an invalid or inconsistent setting; the message names the file or the key.
    """
    values = _left_to_owner(cls, _renamed(cls, read_toml(path), f"in {path}")) if path else {}
    given = {k: v for k, v in overrides.items() if v is not None}
    values.update(_renamed(cls, given, "on the command line"))
    known = {k.name for k in keys_of(cls)}
    for name in values:
        if name not in known:
            raise ConfigError(f"unknown config key {name!r}")
    return cls(**values)  # __post_init__: settings.check (types, lists as tuples), _check


def _left_to_owner(cls: type, values: dict[str, Any]) -> dict[str, Any]:
    """``values`` read from a file: without the keys of the job that owns the file
    (``cls.shares_file_with``) that ``cls`` does not declare, each checked by its own
    declaration first (ConfigError naming it)."""
    owner = getattr(cls, "shares_file_with", None)
    if owner is None:
        return values
    ours = {k.name for k in keys_of(cls)}
    theirs = {k.name: k for k in keys_of(owner) if k.name not in ours}
    kept: dict[str, Any] = {}
    for name, value in values.items():
        if name in theirs:
            _check_value(theirs[name], tuple(value) if isinstance(value, list) else value)
        else:
            kept[name] = value
    return kept


def _check_type(key: Key, value: Any) -> None:
    expected = key.types
    if not isinstance(value, expected) or (isinstance(value, bool) and bool not in expected):
        raise fail(key.name, f"expected {expected[0].__name__}, got {value!r}")


def comma_list(value: str) -> tuple[str, ...]:
    """A list key's value on the command line: its items comma-separated
    (``--outputs docs,pairs`` for ``outputs = ["docs", "pairs"]``)."""
    return tuple(value.split(","))


def flag_of(name: str) -> str:
    """The command-line flag of key ``name``: ``-k`` for a one-letter key, else ``--`` and
    the name with ``-`` for ``_``."""
    return f"-{name}" if len(name) == 1 else "--" + name.replace("_", "-")


def add_arguments(p: argparse.ArgumentParser, cls: type) -> None:
    """A flag for every key of ``cls`` that has one, and one for each old name; every flag
    defaults to None (= not given: the config file's value stands)."""
    for key in keys_of(cls):
        if not key.setting.flag:
            continue
        kind = _flag_kind(key)
        p.add_argument(flag_of(key.name), dest=key.name, help=_flag_help(key), **kind)
        for old in key.setting.aliases:
            p.add_argument(flag_of(old), dest=old, help=f"deprecated: {flag_of(key.name)}", **kind)


def _flag_kind(key: Key) -> dict[str, Any]:
    types = key.types
    if bool in types:
        return {"action": "store_true", "default": None}
    if tuple in types:
        return {"type": comma_list, "metavar": "A,B"}
    kind: dict[str, Any] = {"type": types[0]}
    if key.setting.choices:
        kind["choices"] = key.setting.choices
    return kind


def _flag_help(key: Key) -> str:
    s = key.setting
    unit = f" ({s.unit})" if s.unit else ""
    return f"{s.help}{unit}; default: {default_text(key)}".replace("%", "%%")


def default_text(key: Key) -> str:
    """A key's default as the key tables show it: ``required``, ``unset`` (with what is used
    instead), or the TOML value."""
    s = key.setting
    if s.required:
        return f"required unless `{s.unless}`" if s.unless else "required"
    if key.default is None:
        return f"unset: {s.unset}" if s.unset else "unset"
    return _toml(key.default)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + "}"
    return str(value)


def key_table(cls: type) -> str:
    """The table of the keys ``cls`` declares itself (markdown, as docs/configuration.md
    shows it)."""
    lines = ["| key | flag | default | unit | what |", "|---|---|---|---|---|"]
    for key in own_keys(cls):
        s = key.setting
        name = f"`{key.name}`" + "".join(f" (was `{old}`)" for old in s.aliases)
        flag = f"`{flag_of(key.name)}`" if s.flag else "none"
        default = default_text(key)
        if not (s.required or key.default is None):
            default = f"`{default}`"  # a TOML value
        lines.append(f"| {name} | {flag} | {default} | {s.unit} | {s.help} |")
    return "\n".join(lines)


MARKER = re.compile(r"^<!-- keys: (\w+) -->$")


def render_tables(text: str, classes: Mapping[str, type]) -> str:
    """``text`` (a page: docs/configuration.md) with the table after each
    ``<!-- keys: Name -->`` line replaced by ``key_table(classes[Name])``; KeyError for a name
    not in ``classes``."""
    out: list[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        m = MARKER.match(line)
        if not m:
            continue
        out.append(key_table(classes[m.group(1)]))
        while i < len(lines) and lines[i].startswith("|"):
            i += 1
    return "\n".join(out)
