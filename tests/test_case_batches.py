"""Batches of cases take fast paths (issue 7: >= 20,000 cases/s through `perfmodel predict
--cases`): JSON lines decoded without the duplicate-key hook where no key can repeat, and cases
checked by groups that share kernel and keys. Each fast path must give what the one-case path
gives, value for value and error for error."""

from __future__ import annotations

import json
import random
from types import SimpleNamespace

import pytest

from perfmodel.cases import load_case_file, normalize, normalize_all
from perfmodel.errors import InputError

VALID = [
    {"kernel": "gemm", "m": 3876, "n": 4096, "k": 4096, "dtype": "bf16", "id": "c0"},
    {"kernel": "rmsnorm", "rows": 4193, "cols": 4096, "dtype": "bf16", "id": 7},
    {"kernel": "stream", "op": "triad", "n": 202713734},
    {"kernel": "attention", "batch": 1, "heads": 32, "kv_heads": 8, "seq_q": 7786, "head_dim": 128, "dtype": "bf16"},
    {"kernel": "attention", "batch": 1, "heads": 32, "seq_q": 1, "seq_kv": 4096, "head_dim": 128, "causal": True,
     "phase": "bwd", "warm": True, "scope": "events", "arch": "mi355x"},
    {"kernel": "elementwise", "n": 1000, "reads": 2, "flops_per_element": 0.5},
    {"kernel": "conv2d", "n": 1, "c": 64, "h": 56, "w": 56, "k": 64, "r": 3, "s": 3, "stride": 1, "pad": 0},
]
ODD = [0, -1, 1.5, 2.0, "12", " 12 ", "1_000", "x", None, "", True, False, float("inf"), float("nan"), 2**53,
       2**53 + 1, 2**53 + 2, 2**2000, [1], {"a": 1}, "true", "yes", "triad ", "TRIAD", "copy", -0.0, "1e3",
       "fp8", "zz", "host", "mi300x", "gemm"]


def _mutate(rng: random.Random, raw: dict) -> dict:
    raw = dict(raw)
    op = rng.random()
    if op < 0.5:
        raw[rng.choice(list(raw))] = rng.choice(ODD)
    elif op < 0.7:
        del raw[rng.choice(list(raw))]
    else:
        raw[rng.choice(["bogus", "dtype", "scope", "warm", "arch", "id", "kernel"])] = rng.choice(ODD)
    return raw


def _one_by_one(raws, archs, **kw) -> tuple[list, list]:
    """What `normalize_all` must give: `normalize` on each case and arch, the first error of each case."""
    cases, errors = [], []
    for i, raw in enumerate(raws):
        targets = archs if archs and len(archs) > 1 and "arch" not in raw else [archs[0] if archs else None]
        try:
            cases += [normalize(raw, i, a, kw.get("dtype"), kw.get("source"), kw.get("kernel"), kw.get("scope"))
                      for a in targets]
        except InputError as e:
            errors.append(str(e))
    return cases, errors


def _summary(c) -> tuple:
    params = [(k, type(v).__name__, repr(v)) for k, v in c.params.items()]  # 4096 and 4096.0 differ
    return (c.index, c.id, c.arch, c.kernel, c.dtype, params, c.model.name, c.scope, c.warm)


@pytest.mark.parametrize("seed", range(6))
def test_grouped_normalization_equals_one_by_one(seed):
    """Random batches mixing valid cases with odd values and keys: the same Cases (types too)
    and the same error lines, in the same order, as `normalize` case by case."""
    rng = random.Random(seed)
    for _ in range(40):
        raws = [_mutate(rng, rng.choice(VALID)) if rng.random() < 0.3 else dict(rng.choice(VALID))
                for _ in range(rng.randint(1, 30))]
        for archs in (None, ["mi300x"], ["mi300x", "mi355x"]):
            for kw in ({}, {"dtype": "fp16"}, {"kernel": "gemm", "scope": "host", "source": "f.jsonl"}):
                want_cases, want_errors = _one_by_one(raws, archs, **kw)
                problems: list = []
                got = normalize_all(raws, archs, problems=problems, **kw)
                assert [_summary(c) for c in got] == [_summary(c) for c in want_cases]
                assert [str(e) for e in problems] == want_errors
                if want_errors:  # without a problems list: the first invalid case raises
                    with pytest.raises(InputError) as e:
                        normalize_all(raws, archs, **kw)
                    assert str(e.value) == want_errors[0]


def test_grouped_cases_do_not_share_params_across_archs():
    a, b = normalize_all([{"kernel": "gemm", "m": 8, "n": 8, "k": 8}], ["mi300x", "mi355x"])
    assert a.params == b.params and a.params is not b.params


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ('{"m": 1, "m": 2}', "key 'm' given twice"),
        ('{"id": "a:b", "m": 1, "m": 2}', "key 'm' given twice"),  # a colon inside a string
        ('{"x": {"b": 1, "b": 2}}', "key 'b' given twice"),  # nested
        ('{"\\u006d": 1, "m": 2}', "key 'm' given twice"),  # the same key spelt two ways
        ('{"m": 1}{"n": 2}', "malformed JSON (Extra data)"),
        ('{"m": 1,}', "malformed JSON"),
        ("[1, 2]", "expected a JSON object per line"),
    ],
)
def test_json_lines_refuse_repeated_keys_and_bad_lines(tmp_path, line, needle):
    f = tmp_path / "c.jsonl"
    f.write_text('{"kernel": "gemm"}\n\n' + line + "\n")
    with pytest.raises(InputError) as e:
        load_case_file(str(f))
    assert str(e.value).startswith(f"{f}: line 3: ") and needle in str(e.value)


def test_json_lines_fast_decode_keeps_values(tmp_path):
    rows = [{"id": "a:b", "m": 1}, {"x": {"y": 1}}, {"kernel": "gemm", "m": 2.5e3, "t": True, "n": None}, {}]
    f = tmp_path / "c.jsonl"
    f.write_text(" " + "\n".join(json.dumps(r) for r in rows) + "  \n")  # leading/trailing blanks too
    assert load_case_file(str(f)) == rows


def test_batch_shapes_equal_case_by_case_shapes():
    """`_shapes` (column by column) gives each case's `_shape`: whole floats as ints, None left
    out, the case's own key order; mixed orders and partly-None columns go case by case."""
    from perfmodel.columns import Columns
    from perfmodel.prediction import _shape
    from perfmodel.prediction import _shapes as shapes

    def _shapes(cases):  # Columns where the cases list their parameters alike
        got = shapes(cases)
        return got.dicts() if isinstance(got, Columns) else got

    def cases(*params):  # _shapes reads only .params
        return [SimpleNamespace(params=p) for p in params]

    batches = [
        [{"m": 4096.0, "n": 3.5, "layout": "tn", "kv": None, "b": 16}, {"m": 1.0, "n": 2.0, "layout": "nt", "kv": None, "b": 16}],
        [{"m": 4096.0, "kv": None}, {"m": 2.0**60, "kv": 8.0}],  # partly None: case by case
        [{"m": 1.0, "n": 2.0}, {"n": 2.0, "m": 1.0}],  # two orders
        [{"m": 1.0, "n": 2}, {"m": 1, "n": 2.5}],  # ints and floats mixed in a column
        [{"m": True, "n": 1e300}],
        [{}],
    ]
    for params in batches:
        got = _shapes(cases(*params))
        assert got == [_shape(p) for p in params]
        assert [list(g.items()) for g in got] == [list(_shape(p).items()) for p in params]  # order, int vs float
        assert [[type(v) for v in g.values()] for g in got] == [[type(v) for v in _shape(p).values()] for p in params]


def test_prediction_many_needs_every_field():
    from itertools import repeat

    from perfmodel.record import Prediction

    with pytest.raises(TypeError, match="every field"):
        Prediction.many(1, arch=["mi300x"], kernel=repeat("gemm"))


def test_reused_line_encoder_writes_what_json_writes():
    """The C encoder made once (`output._line_encoder`) gives `JSONEncoder.encode`'s text, key
    memo and all, across rows; inf/nan still go through the clean-up (null), also inside a
    piece of `jsonl_chunks`."""
    import numpy as np

    from perfmodel.output import _LINE_ENCODER, _dumps_line, _encode_line, jsonl_chunks

    rows = [
        {"id": "a\u00e9\n\"", "x": 1.5, "y": [1e-7, 2.0, None, True, 3], "shape": {"m": 4096, "k": 0.1}},
        {"x": 1e300, "shape": {"k": 0.2, "m": 1}, "n": np.float64(2.5), "i": np.int64(7)},  # same keys again, numpy via default
        {"\u2028key": "v"},
    ]
    for r in rows:
        assert _encode_line(r) == _LINE_ENCODER.encode(r) == json.dumps(r, default=lambda o: o.item())
    bad = {"t": float("inf"), "u": [float("nan")]}
    assert _dumps_line(bad) == '{"t": null, "u": [null]}'
    expected = "".join(_dumps_line(r) + "\n" for r in [*rows, bad, rows[0]])
    assert "".join(jsonl_chunks([*rows, bad, rows[0]], size=2)) == expected


def test_numbers_accepted_is_convert_params_check_as_a_column():
    """The column check the grouped path uses accepts a plain int/float exactly where
    `convert_param` returns it unchanged, for every numeric parameter of every family."""
    import math

    from perfmodel.models.registry import all_models, convert_param, numbers_accepted

    values = [0, -1, 1, 1.5, 2.0, 3, 7, 16, 2**53, 2**53 + 2, -0.0, 0.25, 1e300, float("inf"), float("nan"), 128, 32]
    checked = 0
    for model in all_models().values():
        for p in model.params.values():
            if p.kind not in (int, float):
                continue
            got = numbers_accepted(p, [float(v) for v in values]).tolist()
            for v, ok in zip(values, got, strict=True):
                try:
                    same = convert_param(p, v, None) == float(v)
                except InputError:
                    same = False
                assert ok == same, (model.name, p.name, v)
                checked += not math.isnan(float(v))
    assert checked > 100


def test_predict_pauses_the_garbage_collector_only_while_it_runs():
    import gc

    from click.testing import CliRunner

    from perfmodel.cli.main import cli

    gc.enable()
    r = CliRunner().invoke(cli, ["predict", "stream", "op=copy", "n=1000", "--arch", "mi300x"])
    assert r.exit_code == 0 and gc.isenabled()
    r = CliRunner().invoke(cli, ["predict", "stream", "op=copy", "n=-5", "--arch", "mi300x"])
    assert r.exit_code == 2 and gc.isenabled()


@pytest.mark.parametrize(
    "lines",
    [
        ['{"kernel": "gemm", "m": 1}', '{"m": 2.5e3, "t": true, "n": null, "s": "x\\u00e9\\n", "l": [1, 2]}', "{}"],
        ['{"kernel": "gemm", "m": 1}', '{"id": "a:b", "m": 2.5e3, "t": true, "n": null}', "{}"],  # a colon in a string
        ['{"m": 1, "m": 2}', '{"n": 1}'],  # a repeated key
        ['{"id": "a{b", "m": 1}', '{"n": 1}'],  # a brace in a string
        ['{"x": {"y": 1}}', '{"n": 1}'],  # nested
        ['{"a": [{}', '{}]}', '{"b": 1}, {"c": 2}'],  # objects that would span lines once joined
        ['{"a": 1', '"b": 2}'],
        ['{"m": 1}{"n": 2}', '{"k": 3}'],
        ['{"m": 1,}', '{"k": 3}'],
        ['{"m": ' + "9" * 5000 + "}"],  # an integer too long
        [' {"m": 1}', '{"k": 3}  ', "", '{"n": 4}'],  # blanks
    ],
)
def test_json_lines_in_one_call_equal_line_by_line(tmp_path, lines):
    """`_decode_all` (every line in one decoder call) gives `_decode_each`'s rows or declines
    (None); through `load_case_file` the rows, or the error line, are those of line by line."""
    from perfmodel.cases import _decode_all, _decode_each

    text = "\n".join(lines) + "\n"
    try:
        expected: object = _decode_each(text.splitlines(), "f")
    except InputError as e:
        expected = str(e)
    fast = _decode_all(text, text.splitlines())
    assert fast is None or fast == expected
    assert (fast is not None) == (lines[0] == '{"kernel": "gemm", "m": 1}' and "a:b" not in text)  # the first case only
    f = tmp_path / "c.jsonl"
    f.write_text(text)
    try:
        got: object = load_case_file(str(f))
    except InputError as e:
        got = str(e).replace(str(f), "f")
    assert got == expected


def test_json_lines_of_the_speed_benchmark_take_the_one_call_path():
    from perfmodel.cases import _decode_all

    rows = [{"kernel": "gemm", "m": i + 1, "n": 4096, "k": 4096, "dtype": "bf16", "id": f"c{i}"} for i in range(100)]
    text = "".join(json.dumps(r) + "\n" for r in rows)
    assert _decode_all(text, text.splitlines()) == rows


def test_generated_dict_displays_equal_dict_of_zip():
    """`columns.rows_of` builds each dict with a generated display: the dicts (values, key order, key
    identity) are those ``dict(zip(keys, values))`` gives, for keys that need quoting, many
    keys, non-text keys and none; unequal columns are refused."""
    from perfmodel.columns import rows_of

    odd = ("compute:mfma:bf16", "it's", 'say "hi"', "back\\slash", "new\nline", "é", "{v0}", "lambda", "")
    many = tuple(f"k{i}" for i in range(300))
    for keys in (("hbm",), odd, many, (1, 2.5, None), ("a", 1)):
        cols = [[(i, j) for i in range(3)] for j in range(len(keys))]
        got = rows_of(keys, cols, 3)
        want = [dict(zip(keys, vals, strict=True)) for vals in zip(*cols, strict=True)]
        assert got == want and [list(d) for d in got] == [list(keys)] * 3
    assert rows_of((), [], 2) == [{}, {}]
    with pytest.raises(ValueError):
        rows_of(("a", "b"), [[1, 2], [1]], 2)
