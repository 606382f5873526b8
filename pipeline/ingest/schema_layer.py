"""The schema layer of validation, over whole Arrow columns.

It walks the pydantic models and checks nulls, bounds, literals, patterns and
lengths column by column; the records it flags are then judged by the models
themselves, one by one, so the models stay the one authority and their words the
message.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence
from typing import Annotated, Any, Literal

import annotated_types as at
import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import AfterValidator, BaseModel, BeforeValidator
from pydantic.fields import FieldInfo

from pipeline.helpers.columns import field, is_null, lengths, utc_micros, whole
from pipeline.ingest.hand_history import Exactly, Hand, to_timestamp

Flags = npt.NDArray[np.bool_]


def _unwrap(annotation: Any, metadata: Sequence[Any]) -> tuple[Any, list[Any], bool]:
    """The bare type, all its constraints, and whether None is allowed."""
    meta = list(metadata)
    optional = False
    while True:
        origin = typing.get_origin(annotation)
        args = typing.get_args(annotation)
        if origin is Annotated:  # a Field(...) inside brings its constraints as metadata
            extra = [c for a in args[1:] for c in (a.metadata if isinstance(a, FieldInfo) else [a])]
            annotation, meta = args[0], [*meta, *extra]
        elif origin in (typing.Union, types.UnionType):
            optional = optional or type(None) in args
            annotation = next(a for a in args if a is not type(None))
        else:
            return annotation, meta, optional


def _violations(column: pa.Array, bare: Any, meta: list[Any]) -> Flags:
    """Where non-null values break a constraint (nulls are judged by the caller)."""
    if pa.types.is_dictionary(column.type):  # each distinct value judged once
        per_text = np.append(_violations(column.dictionary, bare, meta), False)
        index = pc.fill_null(column.indices, len(column.dictionary))
        return per_text[index.to_numpy(zero_copy_only=False)]
    bad = np.zeros(len(column), dtype=bool)
    compare = {
        at.Gt: (pc.less_equal, "gt"),
        at.Ge: (pc.less, "ge"),
        at.Lt: (pc.greater_equal, "lt"),
        at.Le: (pc.greater, "le"),
    }
    for m in meta:
        for kind, (op, attribute) in compare.items():
            if isinstance(m, kind):
                bound = getattr(m, attribute)
                scalar = (
                    pa.scalar(bound, type=column.type)
                    if pa.types.is_decimal(column.type)
                    else bound
                )
                bad |= pc.fill_null(op(column, scalar), False).to_numpy(zero_copy_only=False)
        pattern = getattr(m, "pattern", None)
        if isinstance(pattern, str):
            bad |= ~pc.fill_null(pc.match_substring_regex(column, pattern), True).to_numpy(
                zero_copy_only=False
            )
        if isinstance(m, BeforeValidator) and m.func is to_timestamp:
            bad |= utc_micros(column)[1] & ~is_null(column)
    if typing.get_origin(bare) is Literal:
        allowed = pa.array(typing.get_args(bare), type=column.type)
        bad |= ~pc.fill_null(pc.is_in(column, value_set=allowed), True).to_numpy(
            zero_copy_only=False
        )
    return bad & ~is_null(column)


def _rejected(column: pa.Array, annotation: Any, metadata: Sequence[Any], required: bool) -> Flags:
    """Which values of `column` the models would reject.

    Flags are kept at each level and lifted to the parent list only where some are set,
    so a nested column that is all in order costs its checks and nothing more.
    """
    bare, meta, optional = _unwrap(annotation, metadata)
    nulls = is_null(column)
    bad = _violations(column, bare, meta)
    if required or not optional:
        bad |= nulls
    for m in meta:
        if isinstance(m, AfterValidator) and isinstance(m.func, Exactly):
            bad |= (lengths(column) != m.func.n) & ~nulls
    if typing.get_origin(bare) is list:
        column = whole(column)
        inner = _rejected(pc.list_flatten(column), typing.get_args(bare)[0], (), True)
        if inner.any():
            parents = pc.list_parent_indices(column).to_numpy(zero_copy_only=False)
            bad[parents[inner]] = True
    elif isinstance(bare, type) and issubclass(bare, BaseModel):
        bad |= _model_rejected(bare, column)
    return bad


def _model_rejected(model: type[BaseModel], structs: pa.Array) -> Flags:
    """Which structs have a field the model would reject (a null struct is its caller's)."""
    bad = np.zeros(len(structs), dtype=bool)
    for name, f in model.model_fields.items():
        bad |= _rejected(field(structs, name), f.annotation, f.metadata, f.is_required())
    return bad & ~is_null(structs) if structs.null_count else bad


def schema_suspects(table: pa.Table) -> Flags:
    """Records the schema layer cannot pass; the models then judge each of them."""
    structs = pa.StructArray.from_arrays(
        [whole(c) for c in table.columns], names=table.column_names
    )
    return _model_rejected(Hand, structs)
