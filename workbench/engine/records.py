"""Frozen records for the modules the status line and the hooks import.

Claude Code runs `workbench statusline` as a new process after every message, and a
dataclass compiles its methods (`exec`) when its class is created: the twenty on the status
line's path cost a quarter of its start-up, and `dataclasses` itself imports `inspect`. A
`Record` subclass is declared like a frozen dataclass (annotated fields, defaults after the
fields without one, docstrings under them) and behaves like one: keyword or positional
construction, read-only attributes, equality and hash by value (`eq=False`: by identity), a
readable repr; `replace()` makes a changed copy. Defaults must be immutable (use `()`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, dataclass_transform

if TYPE_CHECKING:  # a TypeVar bound by name compiles that name: 1.5 ms of every status line
    from typing import TypeVar

    _R = TypeVar("_R", bound="Record")


class FrozenRecordError(AttributeError):
    """A record's fields are read-only."""


@dataclass_transform(frozen_default=True)
class Record:
    """Base of a frozen record; see the module docstring."""

    _fields: ClassVar[tuple[str, ...]] = ()
    _defaults: ClassVar[dict[str, Any]] = {}
    _field_set: ClassVar[frozenset[str]] = frozenset()
    _post_init: ClassVar[bool] = False

    def __init_subclass__(cls, *, eq: bool = True, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        names = list(cls._fields)
        defaults = dict(cls._defaults)
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():
            if str(annotation).startswith(("ClassVar", "typing.ClassVar")):
                continue
            if name not in names:
                names.append(name)
            if name in cls.__dict__:
                value = cls.__dict__[name]
                if isinstance(value, (list, dict, set)):
                    raise TypeError(f"{cls.__name__}.{name}: a mutable default is shared")
                if type(value).__module__ == "dataclasses":  # field(...): say so, not misread it
                    raise TypeError(f"{cls.__name__}.{name}: dataclasses.field() in a Record")
                defaults[name] = value
            elif defaults and name not in defaults:
                raise TypeError(f"{cls.__name__}.{name}: a field without a default follows one")
        cls._fields = tuple(names)
        cls._field_set = frozenset(names)
        cls._defaults = defaults
        cls._post_init = hasattr(cls, "__post_init__")
        if not eq:
            cls.__eq__ = object.__eq__  # type: ignore[method-assign]
            cls.__hash__ = object.__hash__  # type: ignore[method-assign]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        cls = type(self)
        fields = cls._fields
        state = self.__dict__
        state.update(cls._defaults)
        if args:
            if len(args) > len(fields):
                raise TypeError(f"{cls.__name__}() takes {len(fields)} fields")
            state.update(zip(fields, args, strict=False))
            if kwargs and not kwargs.keys().isdisjoint(fields[: len(args)]):
                raise TypeError(f"{cls.__name__}() got a field twice")
        state.update(kwargs)
        # Dict updates and a set test, no loop: records are built in loops (a turn, a file).
        if len(state) != len(fields) or (kwargs and not kwargs.keys() <= cls._field_set):
            unknown = sorted(kwargs.keys() - cls._field_set)
            missing = [name for name in fields if name not in state]
            raise TypeError(f"{cls.__name__}(): unknown fields {unknown}, missing {missing}")
        if cls._post_init:
            self.__post_init__()  # type: ignore[attr-defined]

    def _values(self) -> tuple[Any, ...]:
        state = self.__dict__
        return tuple(state[name] for name in self._fields)

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenRecordError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenRecordError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        inner = ", ".join(
            f"{name}={value!r}" for name, value in zip(self._fields, self._values(), strict=True)
        )
        return f"{type(self).__qualname__}({inner})"


def replace(record: _R, **changes: Any) -> _R:
    """A copy of `record` with `changes` (the fields named must exist)."""
    values = dict(zip(record._fields, record._values(), strict=True))
    values.update(changes)
    return type(record)(**values)


def as_dict(record: Record) -> dict[str, Any]:
    """The fields and their values (one level: nested records stay records)."""
    return dict(zip(record._fields, record._values(), strict=True))


def field_names(record: Record | type[Record]) -> tuple[str, ...]:
    """The fields of a record or record class, in order."""
    return record._fields
