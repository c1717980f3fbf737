"""`Record`: the frozen record the status line's modules use instead of dataclasses."""

from __future__ import annotations

import dataclasses
from functools import cached_property

import pytest

from workbench.engine.records import FrozenRecordError, Record, as_dict, field_names, replace


class Point(Record):
    x: int
    y: int = 0
    """Documented like a dataclass field."""
    tags: tuple[str, ...] = ()

    @cached_property
    def norm(self) -> int:
        return abs(self.x) + abs(self.y)


class Tagged(Point):
    label: str = ""


class Ident(Record, eq=False):
    value: int


def test_fields_take_positions_keywords_and_defaults():
    assert field_names(Point) == ("x", "y", "tags")
    assert Point(1, 2) == Point(x=1, y=2, tags=())
    assert Point(3).y == 0
    assert repr(Point(1, tags=("a",))) == "Point(x=1, y=0, tags=('a',))"
    assert field_names(Tagged) == ("x", "y", "tags", "label")


@pytest.mark.parametrize(
    "make",
    [lambda: Point(), lambda: Point(1, 2, (), 4), lambda: Point(1, x=2), lambda: Point(1, z=2)],
)
def test_a_wrong_construction_is_a_type_error(make):
    with pytest.raises(TypeError):
        make()


def test_records_are_read_only_but_cache_properties():
    p = Point(3, -4)
    with pytest.raises(FrozenRecordError):
        p.x = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del p.y  # type: ignore[misc]
    assert p.norm == 7


def test_equality_and_hash_are_by_value_and_by_class():
    assert hash(Point(1, 2)) == hash(Point(1, 2))
    assert len({Point(1, 2), Point(1, 2), Point(2, 1)}) == 2
    assert Point(1) != Tagged(1)
    assert Ident(1) != Ident(1)
    one = Ident(1)
    assert one == one and len({one, one}) == 1


def test_replace_and_as_dict():
    p = Point(1, 2)
    q = replace(p, y=5)
    assert (p.y, q.y, q.x) == (2, 5, 1)
    assert as_dict(q) == {"x": 1, "y": 5, "tags": ()}
    with pytest.raises(TypeError):
        replace(p, z=1)


def test_declarations_dataclasses_refuse_are_refused():
    with pytest.raises(TypeError, match="mutable default"):

        class Shared(Record):
            items: list[int] = []  # noqa: RUF012

    with pytest.raises(TypeError, match="field"):

        class Merged(Record):
            items: tuple[int, ...] = dataclasses.field(default_factory=tuple)

    with pytest.raises(TypeError, match="without a default"):

        class Order(Record):
            a: int = 0
            b: int
