"""One recorded op call (`OpRecord`) and the small readers the op -> case rules share: element
counts, bytes per element by the recorded dtype spelling, the op's type, positional arguments.
The tracer (`frontend.trace`) and the chrome-trace reader (`traces.chrome`) build the records;
`frontend.opmap` and `frontend.vision_ops` read them. No torch here."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from perfmodel.frontend.op_tables import DTYPE_NAMES, INTEGER_NAMES

NO_KERNEL = "no kernel"


@dataclass
class OpRecord:
    op: str  # "aten::mm", "perfmodel::all_reduce", "aten::scaled_dot_product_attention"
    module: str = ""  # module path ("layers.3.mlp.down_proj"), "" when unknown
    inputs: list = field(default_factory=list)  # shape tuple | list of shape tuples | None per argument
    dtypes: list = field(default_factory=list)  # dtype spelling per argument (or None)
    scalars: list = field(default_factory=list)  # the non-tensor argument values (or None)
    kwargs: dict = field(default_factory=dict)
    outputs: list = field(default_factory=list)  # output shapes (tracer only)
    out_dtype: str | None = None
    index: int = 0  # order in the trace
    # element strides per argument (tuple, or None when the source does not record them): a
    # convolution's input in channels_last memory format is NHWC, which spares the library's
    # layout transposes (conv2d ``layout``)
    strides: list = field(default_factory=list)

    @property
    def name(self) -> str:
        """The bare op name: ``aten::addmm.default`` -> ``addmm``."""
        return self.op.split("::")[-1].split(".")[0]

    def shapes_text(self) -> str:
        return " ".join("x".join(str(d) for d in s) if isinstance(s, tuple) else ("[" + ",".join("x".join(map(str, t)) for t in s) + "]") for s in self.inputs if s is not None and s != [])


def numel(shape) -> int:
    return math.prod(shape) if shape else 1


def bytes_of(spelling: str | None, fallback: str) -> float:
    from perfmodel.dtypes import SIZE

    name = DTYPE_NAMES.get(spelling or "") or INTEGER_NAMES.get(spelling or "", fallback)
    return SIZE.get(name, SIZE.get(fallback, 2))


def dtype_of(rec: OpRecord, default: str) -> str:
    """The op's floating type (its output's, else its first input's), else its integer type
    (`INTEGER_NAMES`), else ``default``."""
    spellings = [rec.out_dtype, *rec.dtypes]
    for table in (DTYPE_NAMES, INTEGER_NAMES):
        for s in spellings:
            if s in table:
                return table[s]
    return default


def tensors(rec: OpRecord) -> list[tuple]:
    """The shapes of the tensor arguments (not of tensor lists)."""
    return [s for s in rec.inputs if isinstance(s, tuple)]


def tensor_args(rec: OpRecord) -> list[tuple[tuple, str | None]]:
    """(shape, dtype spelling or None) of each tensor argument (not of tensor lists), in order."""
    spelled = rec.dtypes + [None] * (len(rec.inputs) - len(rec.dtypes))
    return [(s, d) for s, d in zip(rec.inputs, spelled, strict=False) if isinstance(s, tuple)]


def tensor_bytes(args: list[tuple[tuple, str | None]], default: str) -> float:
    """Bytes of ``args`` (`tensor_args` pairs), each at its own type's size (``default`` if unnamed)."""
    return sum(numel(s) * bytes_of(d, default) for s, d in args)


def arg(rec: OpRecord, i: int, default=None):
    """The ``i``-th non-tensor argument, or ``default`` where it is absent."""
    v = rec.scalars[i] if i < len(rec.scalars) else None
    return default if v is None else v


def pair(v, default: int) -> tuple[int, int]:
    """An int[2] argument (a list, one int for both, or empty for the default)."""
    if isinstance(v, (list, tuple)):
        return (int(v[0]), int(v[-1])) if v else (default, default)
    return (int(v), int(v)) if isinstance(v, (int, float)) and not isinstance(v, bool) else (default, default)
