"""Property-based fuzzing (hypothesis) of every input path: the YAML reader, the archspec loader,
the case parser, the rocprof readers and the counter-formula evaluator.

Property: a valid result (finite, positive times; documented bound classes; flagged impossible
values) or one `InputError` line - never another exception. The examples per test are few so
the default run stays short (about 30 s); `scripts/fuzz.py` runs >= 10,000 generated inputs through the CLI.
"""

from __future__ import annotations

import copy
import csv
import io
import math
import tempfile
from pathlib import Path

import pytest
import yaml

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from data_paths import VCOPY_MI200, VCOPY_MI300X_LONG  # noqa: E402
from perfmodel.arch import archspec_dir  # noqa: E402
from perfmodel.errors import InputError  # noqa: E402
from perfmodel.vocab import is_bound_label  # noqa: E402

FEW = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
SOME = settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))  # slower builders

# values a fuzzed file may hold where a number belongs
weird_values = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30),
    st.integers(min_value=10**300, max_value=10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.none(),
    st.booleans(),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
weird_cells = st.one_of(
    st.sampled_from(["", " ", "nan", "NaN", "inf", "-inf", "1e308", "1e400", "9" * 400, "-1", "-0", "0x10", "abc",
                     "1e-300", "18446744073709551616", "1,5", '"', "\n"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.text(max_size=10),
)


def one_line(e: InputError) -> None:
    assert "\n" not in str(e) and 0 < len(str(e)) <= 400, str(e)


def _leaves(node, path=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _leaves(v, (*path, i))
    else:
        yield path


MI300X = yaml.safe_load((archspec_dir() / "mi300x.yaml").read_text())
LEAVES = list(_leaves(MI300X))


@FEW
@given(path=st.sampled_from(LEAVES), value=weird_values, delete=st.booleans())
def test_archspec_loader(path, value, delete):
    from perfmodel.archspec import parse_spec

    spec = copy.deepcopy(MI300X)
    node = spec
    for k in path[:-1]:
        node = node[k]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    try:
        text = yaml.safe_dump(spec)
    except (OverflowError, ValueError):
        return
    with tempfile.TemporaryDirectory() as t:
        p = Path(t) / "gpu.yaml"
        p.write_text(text)
        try:
            from perfmodel.arch import load_arch
            from perfmodel.prediction import predict

            a = load_arch(str(p))
            parse_spec(yaml.safe_load(text), str(p))
            pred = predict("gemm", arch=a, m=1024, n=1024, k=1024)[0]
        except InputError as e:
            one_line(e)
            return
    assert math.isfinite(pred.time_us) and pred.time_us > 0 and is_bound_label(pred.bound)


KERNELS = {
    "gemm": ["m", "n", "k", "batch"],
    "softmax": ["rows", "cols"],
    "attention": ["batch", "heads", "seq_q", "head_dim", "seq_kv"],
    "stream": ["n"],
    "conv2d": ["n", "c", "h", "w", "k", "r", "s"],
}
sizes = st.one_of(
    st.integers(min_value=-5, max_value=2**60),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["1e200", "9" * 400, "abc", "", "1_024", "4096"]),
)


@FEW
@given(
    kernel=st.sampled_from(sorted(KERNELS)),
    values=st.lists(sizes, min_size=7, max_size=7),
    arch=st.sampled_from(["mi300x", "mi100", "rx7900xtx"]),
    dtype=st.sampled_from([None, "fp8", "fp4", "bf16", "fp64", "bogus"]),
)
def test_case_parser_and_prediction(kernel, values, arch, dtype):
    from perfmodel.prediction import evaluate, normalize_all

    raw = {"kernel": kernel, **dict(zip(KERNELS[kernel], values, strict=False))}
    if kernel == "stream":
        raw["op"] = "triad"
    try:
        preds = evaluate(normalize_all([raw], [arch], dtype))
    except InputError as e:
        one_line(e)
        return
    for p in preds:
        assert math.isfinite(p.time_us) and p.time_us > 0, p.row()
        assert is_bound_label(p.bound)
        assert all(math.isfinite(v) for v in p.row()["bytes"].values())


def _csv_rows(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text())))


MI200_ROWS = _csv_rows(VCOPY_MI200 / "pmc_perf.csv")
LONG_ROWS = _csv_rows(VCOPY_MI300X_LONG)


def _derive_all(path: Path) -> None:
    """Read, derive and validate: InputError or sane measurements."""
    from perfmodel.validate import validate

    try:
        v = validate(str(path))
    except InputError as e:
        one_line(e)
        return
    for r in v.rows:
        t = r["time_us"]
        assert t is None or (math.isfinite(t) and t > 0) or r["flags"], r
        assert r["measured_bound"] is None or is_bound_label(r["measured_bound"])
        for k, x in r["achieved"].items():
            assert math.isfinite(x), (k, x)
            assert x >= 0 or r["flags"], (k, x)
        for k, x in r["pct_of_peak"].items():
            assert x <= 1.0 + 1e-9 or any(f.startswith("above-peak") for f in r["flags"]), (k, x, r["flags"])


@FEW
@given(
    which=st.sampled_from(["wide", "long"]),
    cells=st.lists(st.tuples(st.integers(min_value=1, max_value=10**6), st.integers(min_value=0, max_value=10**6),
                             weird_cells), min_size=1, max_size=3),
    how=st.sampled_from(["cells", "cells", "truncate", "dropcol", "dupcol", "utf16", "bom", "latin1", "crlf", "binary"]),
    cut=st.floats(min_value=0, max_value=1),
)
def test_readers(which, cells, how, cut):
    rows = copy.deepcopy(MI200_ROWS if which == "wide" else LONG_ROWS)
    j = cells[0][1] % len(rows[0])
    if how == "dropcol":
        rows = [r[:j] + r[j + 1:] for r in rows]
    elif how == "dupcol":
        rows = [r + [r[j]] for r in rows]
    else:
        for i, c, v in cells:
            r = rows[1 + i % (len(rows) - 1)]
            r[c % len(r)] = v
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    text = buf.getvalue()
    data = {
        "truncate": lambda: text[: int(len(text) * cut)].encode(),
        "utf16": lambda: text.encode("utf-16"),
        "bom": lambda: b"\xef\xbb\xbf" + text.encode(),
        "latin1": lambda: text.replace("v", "\u00e9", 1).encode("latin-1", "replace"),
        "crlf": lambda: text.replace("\n", "\r\n").encode(),
        "binary": lambda: bytes(range(256)) * 4,
    }.get(how, lambda: text.encode())()
    with tempfile.TemporaryDirectory() as t:
        d = Path(t) / "wl"
        d.mkdir()
        src = VCOPY_MI200 if which == "wide" else VCOPY_MI300X_LONG.parent
        (d / "sysinfo.csv").write_bytes((src / "sysinfo.csv").read_bytes())
        (d / "pmc_perf.csv").write_bytes(data)
        _derive_all(d)


@FEW
@given(text=st.text(max_size=300), tag=st.sampled_from(["", "!!python/object:os.system ", "!!binary ", "&a ", "*a "]))
def test_yaml_reader(text, tag):
    from perfmodel.yamlio import parse_yaml

    try:
        parse_yaml(f"name: {tag}{text}\nother: [" + text + "]\n", "f.yaml")
    except InputError as e:
        one_line(e)


names = st.sampled_from(["a", "b", "SQ_WAVES", "x1"])
atoms = st.one_of(names, st.integers(min_value=-(10**400), max_value=10**400).map(str),
                  st.floats(allow_nan=False).map(repr), st.sampled_from(["1e999", "nan", "()", "a if b else c"]))
exprs = st.recursive(atoms, lambda c: st.one_of(
    st.tuples(c, st.sampled_from(["+", "-", "*", "/", "**", "//", "and", ","]), c).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
    st.tuples(st.sampled_from(["sum", "min", "max", "abs", "eval", "len"]), st.lists(c, max_size=3)).map(
        lambda t: f"{t[0]}({', '.join(t[1])})"),
    c.map(lambda x: f"-{x}")), max_leaves=12)


@FEW
@given(text=st.one_of(exprs, st.text(max_size=50)), env=st.dictionaries(names, st.floats(allow_nan=True,
                                                                                  allow_infinity=True)))
def test_formula_evaluator(text, env):
    from perfmodel.counters.expr import ExprError, parse

    try:
        e = parse(text)
    except ExprError as err:
        assert "\n" not in str(err)
        return
    if not e.names <= env.keys():
        return
    try:
        v = e(env)
    except (ZeroDivisionError, OverflowError):
        return  # derive leaves the quantity out with a note or a flag
    assert isinstance(v, float)


SQL_CELLS = st.one_of(st.none(), st.text(max_size=8), st.binary(max_size=8), st.integers(min_value=-(2**63),
                      max_value=2**63 - 1), st.floats(allow_nan=True, allow_infinity=True))
SQL_COLUMNS = [("rocpd_kernel_dispatch", c) for c in ("start", '"end"', "dispatch_id", "group_segment_size",
                                                      "grid_size_x", "workgroup_size_x", "agent_id", "kernel_id")] + [
    ("rocpd_info_kernel_symbol", "kernel_name"), ("rocpd_info_kernel_symbol", "arch_vgpr_count"),
    ("rocpd_pmc_event", "value"), ("rocpd_info_pmc", "name"), ("rocpd_info_agent", "name"),
    ("rocpd_info_agent", "product_name"), ("rocpd_info_agent", "extdata")]


@SOME
@given(
    target=st.sampled_from(SQL_COLUMNS),
    value=SQL_CELLS,
    every_row=st.booleans(),
    flips=st.lists(st.tuples(st.integers(min_value=100, max_value=10**6), st.integers(0, 255)), max_size=4),
    gpus=st.sampled_from([("gfx942",), ("gfx942", "gfx90a")]),
)
def test_rocpd_sqlite_reader(target, value, every_row, flips, gpus):
    import sqlite3

    from test_readers_rocpd_sqlite import UUID, build_db

    with tempfile.TemporaryDirectory() as t:
        p = Path(t) / "run.db"
        build_db(p, gfx_names=gpus)
        con = sqlite3.connect(p)
        table, col = target
        where = "" if every_row else f" WHERE id = (SELECT MIN(id) FROM `{table}{UUID}`)"
        try:
            con.execute(f"UPDATE `{table}{UUID}` SET {col} = ?{where}", (value,))
            con.commit()
        except sqlite3.Error:
            pass  # a NOT NULL constraint: the database stays valid
        con.close()
        if flips:
            b = bytearray(p.read_bytes())
            for i, v in flips:
                b[i % len(b)] = v
            p.write_bytes(bytes(b))
        _derive_all(p)


@SOME
@given(
    which=st.sampled_from(["123_counter_collection.csv", "123_kernel_trace.csv", "123_agent_info.csv"]),
    cells=st.lists(st.tuples(st.integers(min_value=1, max_value=10**6), st.integers(min_value=0, max_value=10**6),
                             weird_cells), min_size=1, max_size=3),
)
def test_rocprofv3_csv_reader(which, cells):
    from test_readers import test_rocprofv3_csv_directory

    with tempfile.TemporaryDirectory() as t:
        d = Path(t)
        test_rocprofv3_csv_directory(d)
        f = d / which
        rows = _csv_rows(f)
        for i, c, v in cells:
            r = rows[1 + i % (len(rows) - 1)]
            r[c % len(r)] = v
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows(rows)
        f.write_text(buf.getvalue())
        _derive_all(d)


JSON_VALUES = st.one_of(st.none(), st.booleans(), st.text(max_size=6), st.integers(-(2**70), 2**70),
                        st.floats(allow_nan=True, allow_infinity=True), st.just([]), st.just({}))  # fmt: skip


@SOME
@given(steps=st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=7), value=JSON_VALUES)
def test_rocprofv3_json_reader(steps, value):
    """Any one value of a rocprofv3 JSON result replaced by any JSON value: an error line or sane output."""
    import json

    from test_readers_rocprof_json import build_json

    with tempfile.TemporaryDirectory() as t:
        p = Path(t) / "1_results.json"
        doc = build_json(p)
        node, key = doc, "rocprofiler-sdk-tool"
        for s in steps:  # walk down, choosing a key or index at each container
            child = node[key]
            keys = list(child) if isinstance(child, dict) else list(range(len(child))) if isinstance(child, list) else []
            if not keys:
                break
            node, key = child, keys[s % len(keys)]
        node[key] = value
        p.write_text(json.dumps(doc))
        _derive_all(p)
