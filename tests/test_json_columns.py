"""`perfmodel predict --format jsonl` encodes its rows a column at a time (`output.json_objects`)
from the batches' columns (`record.row_columns`), without a record or a dict per row. Both must
write what `json.dumps` writes for the rows `Prediction.row` made record by record, byte for
byte: inf and nan as null, text escaped to ASCII, ints as ints, whole floats as floats."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from perfmodel.columns import Columns
from perfmodel.output import _floats, json_objects


def _finite(v):
    """The row `json.dumps` is given after the clean-up of inf and nan (null), written here
    independently of `perfmodel.output._clean`."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    return v


def _dumps(row: dict) -> str:
    try:
        return json.dumps(row, allow_nan=False, default=lambda o: o.item())
    except ValueError:  # an inf or nan somewhere: the whole row is cleaned, as the CLI always did
        return json.dumps(_finite(row), default=lambda o: o.item())


AWKWARD = [
    0.0, -0.0, 1.5, 2.0, -3.0, 0.1, 1e15, 1e16, 9007199254740993.0, 1e-7, 1e-4, 1e300, 5e-324,
    130056978432.0, 27.008000000000003, float("inf"), float("-inf"), float("nan"),
    0, -1, 7, 2**53 + 1, 10**30, True, False, None,
    "", "tn", "é", "中文", "\u2028", "\U0001f600", 'q"uo\\te', "tab\t\x01\x1b[31m", "50%", "%s", "%(x)s %d",
    [1, 2.5, None], [], (1, "a"), {}, {"a": 1}, {"a": {"b": [0.1, float("nan")]}}, {"%k": "%v"},
    np.float64(2.5), np.float64("nan"), np.int64(7), np.float32(0.1), {"n": np.float64("inf")},
]


def _check(keys: tuple, rows: list[dict]) -> None:
    columns = [[r[k] for r in rows] for k in keys]
    assert json_objects(keys, columns) == [_dumps(r) for r in rows]


@pytest.mark.parametrize("a", AWKWARD, ids=repr)
def test_every_awkward_value_beside_every_other(a):
    """Each value in a column with each other value (two types in a column), alone, repeated
    (a column of one value is written once into the template), and as a key's value of nested
    dicts of the same and of other keys."""
    for b in AWKWARD:
        _check(("v", "w%"), [{"v": a, "w%": 1}, {"v": b, "w%": 1}])
    _check(("v",), [{"v": a}])
    _check(("v", "id"), [{"v": a, "id": f"c{i}"} for i in range(70)])
    nested = [{"x": {"p": a, "q": 1.5}}, {"x": {"p": 2.25, "q": a}}, {"x": {"q": a}}, {"x": {"p": a, "q": 1.5}}]
    _check(("x",), nested)


def test_float_columns_long_and_short_repeated_and_not():
    """Long columns: repeats written once per distinct value (where the first values repeat),
    0.0 beside -0.0, an inf or nan far down the column, every float kind mixed in."""
    rng = random.Random(5)
    floats = [v for v in AWKWARD if type(v) is float]
    columns = [
        [1.25, 2.5] * 100,
        [1.25, 2.5] * 100 + [0.0, -0.0],
        [-0.0] * 80 + [0.0],
        [0.0] * 80,
        [-0.0] * 80,
        [3.5] * 150 + [float("nan")],
        [rng.random() * 10 ** rng.randint(-12, 20) for _ in range(300)],
        [rng.choice(floats) for _ in range(300)],
        [rng.choice([1.0, 2.0, 3.0, rng.random()]) for _ in range(300)] + [float("inf")],
    ]
    for col in columns:
        _check(("t", "u"), [{"t": v, "u": i} for i, v in enumerate(col)])


def test_whole_float_columns_written_as_ints():
    """A column of whole floats is written from ints (`output._whole`): every magnitude up to
    1e16 and the floats about 2**53 (spacing 2 above it) and 1e16 (exponent form from there
    on), beside 0.0, -0.0 and negatives (which keep the repr)."""
    rng = random.Random(7)
    big = [float(2**53 + d) for d in range(-8, 9)] + [9999999999999998.0, 1e16 - 2, 1e16, 1e16 + 2, 2.0**63, 1e17]
    columns = [
        [float(rng.randint(0, 10 ** rng.randint(0, 16))) for _ in range(400)],
        [float(2 * rng.randint(2**52, 5 * 10**15 - 1)) for _ in range(400)],  # even, from 2**53 to 1e16
        [v for v in big if v < 1e16],
        big,
        [0.0, 1.0, 2.0] * 50,
        [0.0, -0.0, 3.0] * 50,
        [5.0, -2.0, 7.0] * 50,
    ]
    for col in columns:
        _check(("t", "u"), [{"t": v, "u": i} for i, v in enumerate(col)])
        assert json_objects(("t",), [col]) == [f'{{"t": {v!r}}}' for v in col]
    assert [_floats(c)[0] for c in columns] == ["%d.0", "%d.0", "%d.0", "%s", "%d.0", "%r", "%s"]


def test_columns_of_dicts_and_nested_columns():
    """`Columns` (dicts kept as one list per key) are written as their dicts, nested too; dict
    keys that are not text go through the C encoder's own conversion."""
    inner = Columns(("hbm", "l2"), [[1.0, 2.5], [float("inf"), 4.0]], 2)
    outer = Columns(("bytes", "n"), [inner, [1, 2]], 2)
    expected = [_dumps({"id": "a", "b": {"bytes": {"hbm": 1.0, "l2": float("inf")}, "n": 1}}),
                _dumps({"id": "b", "b": {"bytes": {"hbm": 2.5, "l2": 4.0}, "n": 2}})]
    assert json_objects(("id", "b"), [["a", "b"], outer]) == expected
    odd = [{1: "int key", 2.5: "float key", None: 0, False: 1}, {1: "x", 2.5: "y", None: 1, False: 2}]
    _check(("d",), [{"d": d} for d in odd])
    assert json_objects((), []) == []


def _row_reference(p) -> dict:
    """The row as `Prediction.row` wrote it record by record (before rows were made a column at
    a time): the contract the columns must keep."""
    t, b, rt = p.time_s, p.bytes, p.roofline_time_s
    f = sum(p.flops_by.values()) if p.flops_by else 0.0
    hb = b.get(p.memory_level, 0.0)
    lo, hi = p.band
    row = {"id": p.id, "arch": p.arch, "kernel": p.kernel, "dtype": p.dtype, "scope": p.scope, "shape": p.shape,
           "time_us": t * 1e6, "time_band_us": [t / hi * 1e6, t / lo * 1e6], "bound": p.bound, "flops": f,
           "flops_by": p.flops_by, "bytes": b, "tflops": f / t / 1e12 if t > 0 else 0.0, "ai": f / hb if hb > 0 else None,
           "roofline_time_us": rt * 1e6, "roofline_bound": p.roofline_bound, "headroom": rt / t if t > 0 else 1.0,
           "terms_us": {k: v * 1e6 for k, v in p.terms_s.items()}, "tile": p.tile, "grid": p.grid, "wgs_per_cu": p.wgs_per_cu}
    if p.id is None:
        del row["id"]
    if p.iops_by:
        row["iops_by"] = p.iops_by
    if p.notes:
        row["notes"] = p.notes
    return row


def _mixed_cases() -> list[dict]:
    """Every family of the suite, ids on some cases only, warm and scope keys, integer work,
    shapes too big for memory, a case some GPUs cannot run (fp16 VALU on H100: left out)."""
    from perfmodel.arch import data_path
    from perfmodel.yamlio import parse_yaml, read_text

    suite = parse_yaml(read_text(data_path("kernels", "suite.yaml"), "suite"), "suite")
    cases = []
    for i, c in enumerate(suite * 3):
        c = dict(c)
        if i % 3 == 1:
            c.pop("id", None)
        elif i % 3 == 2:
            c["id"] = f"é{i}"
        if i % 5 == 1:
            c["warm"] = True
        cases.append(c)
    cases += [{"kernel": "mixbench", "elem": e, "compute_iters": 8 * i} for i, e in enumerate(["int", "short", "half2", "float"])]
    cases += [{"kernel": "elementwise", "n": 2**53, "reads": 2**40, "id": "huge"}, {"kernel": "elementwise", "n": 1, "reads": 0, "writes": 0}]
    return cases


@pytest.mark.parametrize("chunks", [1, 3])
def test_rows_from_batch_columns_are_the_records_rows(chunks):
    """The rows and JSON lines made from the batches' columns, a window of positions at a time
    (`Batches.pieces`), in chunks of cases joined (`Batches.joined`, the progress-bar path), with
    cases left out: the record-by-record rows, in order; `Prediction.row` and `record.rows` too."""
    from perfmodel.cli.cmd_predict import _json_lines, _rows
    from perfmodel.prediction import Batches, evaluate_batches, normalize_all
    from perfmodel.record import rows

    cases = normalize_all(_mixed_cases(), ["mi300x", "h100", "mi355x"])
    problems: list = []
    size = -(-len(cases) // chunks)
    batches = Batches.joined([evaluate_batches(cases[i : i + size], problems=problems) for i in range(0, len(cases), size)])
    assert problems and len(batches) == len(cases) - len(problems)
    preds = batches.records()
    expected = [_row_reference(p) for p in preds]
    assert [p.row() for p in preds] == expected and rows(preds) == expected
    assert [list(r) for r in rows(preds)] == [list(r) for r in expected]  # key order
    for piece in (1, 7, 4096):
        import perfmodel.cli.cmd_predict as cmd

        cmd._PIECE, old = piece, cmd._PIECE
        try:
            assert list(_rows(batches)) == expected
            assert "".join(_json_lines(batches)) == "".join(_dumps(r) + "\n" for r in expected)
        finally:
            cmd._PIECE = old
