"""neardup_udfs.kernels.readonly: attributes fixed by the constructor, read under the
reference's names, refused on assignment, documented."""

from __future__ import annotations

import pytest

from neardup_udfs.kernels import lsh_index, sample
from neardup_udfs.kernels.readonly import ReadOnly


class _Shape:
    bands = ReadOnly[int]("_bands", "Number of bands.")

    def __init__(self, bands: int) -> None:
        self._bands = bands


def test_an_instance_reads_its_value_and_refuses_assignment() -> None:
    shape = _Shape(16)
    assert shape.bands == 16 and _Shape(4).bands == 4  # per instance, not shared
    with pytest.raises(AttributeError, match="_Shape.bands is read-only"):
        shape.bands = 8
    assert shape.bands == 16


def test_the_class_attribute_carries_its_doc() -> None:
    assert isinstance(_Shape.bands, ReadOnly) and _Shape.bands.__doc__ == "Number of bands."


def test_the_reference_structures_keep_their_read_only_names() -> None:
    index = lsh_index.Index(16, 8)
    assert (index.bands, index.rows) == (16, 8)
    reservoir = sample.Reservoir(5, seed=1)
    assert (reservoir.k, reservoir.n) == (5, 0)
    with pytest.raises(AttributeError):
        index.bands = 2  # type: ignore[misc]
