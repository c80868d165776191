"""Fuzz the CLI in-process with inputs mutated from the real sample files.

    python scripts/fuzz.py                  # 10,000 inputs, seed 0
    python scripts/fuzz.py -n 500 --seed 3  # a quick run
    python scripts/fuzz.py --keep DIR       # copy every failing input to DIR

Families: archspecs (`arch show`, `predict --arch FILE`), case files (`predict --cases`),
key=value words (`predict`), workloads (`validate DIR --format json`: cell values, encodings,
truncation, columns), rocprofv3 CSV folders, rocpd databases, torch.profiler chrome traces
(`validate`, a what-if, a chart, `doctor`), rocprofv3 JSON results (`validate`
or `doctor`), manifests (`validate --cases`), YAML bombs. Every run must end in exit 0
with sane output, or exit 2 with one `error:` line; anything else is counted and listed:
``traceback`` (an exception escaped), ``hang`` (over --timeout seconds), ``multiline`` (an error of
more than one line), ``insane`` (exit 0 with a non-finite or negative number, a fraction of a peak above 1 without
a flag, or a Python/numpy warning on stderr). Prints the counts; exit status 1 when any is non-zero.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import random
import shutil
import signal
import sys
import tempfile
import traceback
from collections import Counter
from pathlib import Path

import yaml
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from perfmodel.cli.main import cli  # noqa: E402

ROCPROF = ROOT / "tests/data/rocprof"
WORKLOADS = [
    ROCPROF / "rocprofiler-compute/tests_workloads_2024/vcopy/MI200",
    ROCPROF / "rocprofiler-compute/tests_workloads_2024/vcopy/MI100",
    ROCPROF / "rocprofiler-compute/tests_workloads_2024/vcopy/MI300X_A1",
    ROCPROF / "rocprofiler-compute/legacy_2022/mixbench/mi200",
    ROCPROF / "rocm-systems/tests_workloads_2025/vcopy/MI350",
    ROCPROF / "rocm-systems/tests_workloads_2025/vcopy/MI300X_A1_rocpd",
]
BAD_NUMBERS = ["0", "-1", "-0", "nan", "NaN", "inf", "-inf", ".inf", "1e308", "1e400", "9" * 400, "-" + "9" * 30,
               "0.5", "1e-300", "abc", "", " ", "0x10", "1_000", "true", "[1]", "{}", "null", "~", "1e200"]
BAD_YAML_VALUES = [0, -1, -0.0, float("nan"), float("inf"), float("-inf"), 1e308, 10**400, "abc", "", [], {}, None,
                   True, [1, 2], 0.5, 1e-300, 2**63, "1e200", [[]], {"a": 1}]


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def run(args: list[str], timeout: float) -> tuple[str, str]:
    """(outcome, detail) of one CLI run."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        r = CliRunner().invoke(cli, args, catch_exceptions=True)
    except Hang:
        return "hang", " ".join(args)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if isinstance(r.exception, Hang):
        return "hang", " ".join(args)
    err = r.stderr if hasattr(r, "stderr") else r.output
    if r.exit_code == 0:
        if "Warning" in err:
            return "insane", f"warning on stderr: {err[-300:]}"
        bad = insane(r.stdout)
        return ("insane", bad) if bad else ("exit0", "")
    if r.exit_code == 2:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        # one line per bad input: a case file with several invalid cases names each of them
        if lines and all(ln.startswith("error: ") for ln in lines):
            return "exit2", ""
        return "multiline", err[:300]
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        tb = "".join(traceback.format_exception(r.exception))[-600:]
        return "traceback", tb
    return "traceback", f"exit {r.exit_code}: {err[:300]}"


def insane(stdout: str) -> str:
    """Why a JSON output holds an impossible value without a flag, or ''."""
    try:
        data = json.loads(stdout) if stdout.lstrip().startswith("[") else [json.loads(x) for x in stdout.splitlines() if x]
    except ValueError:
        return ""
    for row in data if isinstance(data, list) else []:
        if not isinstance(row, dict):
            continue
        flags = row.get("flags") or []
        for k, v in _numbers(row):
            if isinstance(v, float) and not math.isfinite(v):
                return f"{k}={v}"
            amount = k.split(".")[0] in AMOUNTS
            if amount and v < 0 and not flags:
                return f"{k}={v} unflagged"
            if k.startswith("pct_of_peak") and v > 1.0 + 1e-9 and not flags:
                return f"{k}={v:.3g} of peak unflagged"
            if k == "clock_hz" and not v > 0:
                return f"{k}={v}"
        t = row.get("time_us")
        if isinstance(t, (int, float)) and not t > 0 and not flags:
            return f"time_us={t}"
    return ""


# fields that are amounts or rates: never negative unless a flag says why
AMOUNTS = {"time_us", "clock_hz", "flops", "flops_by", "bytes", "bytes_read", "bytes_write", "achieved", "pct_of_peak",
           "tflops", "predicted_time_us", "predicted_flops", "predicted_bytes", "roofline_time_us", "headroom"}


def _numbers(node, prefix=""):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _numbers(v, f"{prefix}{k}.")
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        yield prefix[:-1], node


# --- families -----------------------------------------------------------------------------


def _leaves(node, path=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _leaves(v, path + (i,))
    else:
        yield path


def _set(node, path, value):
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value


def _del(node, path):
    for p in path[:-1]:
        node = node[p]
    del node[path[-1]]


def bombs(rng: random.Random) -> str:
    kind = rng.choice(["deep_flow", "deep_block", "laughs", "big", "python_tag", "anchor_cycle"])
    if kind == "deep_flow":
        d = rng.choice([100, 1000, 10000, 50000])
        return "name: " + "[" * d + "]" * d + "\n"
    if kind == "deep_block":
        d = rng.choice([70, 500, 3000])
        return "name:\n" + "".join(" " * i + "- \n" for i in range(d))
    if kind == "laughs":
        n = rng.choice([5, 7, 9])
        lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
        lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i-1}"] * 9) + "]" for i in range(1, n)]
        lines.append(f"name: *a{n-1}")
        return "\n".join(lines) + "\n"
    if kind == "big":
        return "name: [" + ",".join(["1"] * rng.choice([1000, 200000])) + "]\n"
    if kind == "python_tag":
        return "name: !!python/object/apply:os.system ['true']\n"
    return "a: &a [*a]\nname: *a\n"


def encode(text: str, rng: random.Random) -> bytes:
    how = rng.choice(["utf8", "utf16", "bom", "latin1", "crlf", "binary", "nul", "truncate"])
    if how == "utf16":
        return text.encode("utf-16")
    if how == "bom":
        return b"\xef\xbb\xbf" + text.encode()
    if how == "latin1":
        return text.replace("a", "\u00e9", 3).encode("latin-1", "replace")
    if how == "crlf":
        return text.replace("\n", "\r\n").encode()
    if how == "binary":
        return bytes(rng.randrange(256) for _ in range(200))
    if how == "nul":
        return text.encode()[:100] + b"\x00" + text.encode()[100:]
    if how == "truncate":
        b = text.encode()
        return b[: rng.randrange(len(b) + 1)]
    return text.encode()


def fam_archspec(rng, tmp: Path):
    spec = yaml.safe_load((ROOT / "archspecs" / rng.choice(["mi300x.yaml", "mi250x.yaml", "mi100.yaml"])).read_text())
    p = tmp / "spec.yaml"
    r = rng.random()
    if r < 0.1:
        p.write_text(bombs(rng))
    elif r < 0.2:
        p.write_bytes(encode(yaml.safe_dump(spec), rng))
    else:
        for _ in range(rng.choice([1, 1, 2, 3])):
            leaves = list(_leaves(spec))
            path = rng.choice(leaves)
            if rng.random() < 0.15:
                _del(spec, path)
            else:
                _set(spec, path, rng.choice(BAD_YAML_VALUES))
        try:
            p.write_text(yaml.safe_dump(spec))
        except (OverflowError, ValueError):
            p.write_text("name: x\n")
    cmd = rng.choice([["arch", "show", str(p)], ["predict", "gemm", "m=512", "n=512", "k=512", "--arch", str(p)],
                      ["predict", "gemm", "m=512", "n=512", "k=512", "--arch", f"{p}@{rng.choice(['1000mhz', '0.5ghz', '1e3'])}"],
                      ["predict", "softmax", "rows=4", "cols=1024", "--arch", str(p), "--format", "json"],
                      ["roofline", "--arch", str(p), "--format", "json"]])
    return cmd, [p]


CASES = [
    {"kernel": "gemm", "m": 1024, "n": 1024, "k": 1024, "dtype": "bf16"},
    {"kernel": "softmax", "rows": 1024, "cols": 4096},
    {"kernel": "attention", "batch": 1, "heads": 8, "seq_q": 512, "head_dim": 128},
    {"kernel": "stream", "op": "triad", "n": 1 << 20},
    {"kernel": "conv2d", "n": 1, "c": 64, "h": 56, "w": 56, "k": 64, "r": 3, "s": 3},
]


def fam_cases(rng, tmp: Path):
    cases = [dict(c) for c in rng.sample(CASES, 2)]
    c = rng.choice(cases)
    k = rng.choice(list(c))
    c[k] = rng.choice(BAD_YAML_VALUES + ["gemm\nx", "a" * 300])
    p = tmp / rng.choice(["cases.yaml", "cases.jsonl"])
    if p.suffix == ".jsonl":
        text = "".join(json.dumps(x, default=str) + "\n" for x in cases)
    else:
        try:
            text = yaml.safe_dump(cases)
        except (OverflowError, ValueError):
            text = "[]\n"
    if rng.random() < 0.2:
        p.write_bytes(encode(text, rng))
    elif rng.random() < 0.05:
        p.write_text(bombs(rng))
    else:
        p.write_text(text)
    return ["predict", "--cases", str(p), "--format", rng.choice(["json", "jsonl", "table"])], [p]


def fam_kv(rng, tmp: Path):
    c = dict(rng.choice(CASES))
    kernel = c.pop("kernel")
    words = [f"{k}={v}" for k, v in c.items()]
    i = rng.randrange(len(words))
    key = words[i].split("=")[0]
    words[i] = f"{key}={rng.choice(BAD_NUMBERS)}"
    if rng.random() < 0.1:
        words.append(words[0])
    extra = []
    if rng.random() < 0.3:
        extra = ["--dtype", rng.choice(["fp8", "fp4", "bogus", "fp64", "int64", "int32", "int16"])]
    archs = ["mi300x", "mi100", "rx7900xtx", "mi300x@1005mhz", "mi355x@1.2ghz", "mi100@0mhz", "mi300x@9e9", "h100@", "all", "mi300x@-5"]
    return ["predict", kernel, *words, "--arch", rng.choice(archs), "--format", "json", *extra], []


def _mutate_csv(text: str, rng) -> str:
    rows = list(csv.reader(io.StringIO(text)))
    if len(rows) < 2:
        return text
    how = rng.choice(["cell", "cell", "cell", "dropcol", "dupcol", "rename", "truncate", "swap_ts", "scale"])
    header = rows[0]
    j = rng.randrange(len(header))
    if how == "cell":
        for _ in range(rng.choice([1, 3])):
            r = rng.randrange(1, len(rows))
            if j < len(rows[r]):
                rows[r][j] = rng.choice(BAD_NUMBERS + ["k\nernel"])
            j = rng.randrange(len(header))
    elif how == "dropcol":
        rows = [row[:j] + row[j + 1:] for row in rows]
    elif how == "dupcol":
        rows = [row + [row[j]] if j < len(row) else row for row in rows]
    elif how == "rename":
        rows[0][j] = rng.choice(["", "X", header[(j + 1) % len(header)]])
    elif how == "swap_ts":
        cols = [i for i, h in enumerate(header) if "Timestamp" in h or h in ("BeginNs", "EndNs")]
        if len(cols) == 2:
            for row in rows[1:]:
                if len(row) > max(cols):
                    row[cols[0]], row[cols[1]] = row[cols[1]], row[cols[0]]
    elif how == "scale":
        f = rng.choice([-1, 10, 1e12, 0])
        for row in rows[1:]:
            if j < len(row):
                try:
                    row[j] = repr(float(row[j]) * f)
                except ValueError:
                    pass
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    out = buf.getvalue()
    if how == "truncate":
        out = out[: rng.randrange(len(out) + 1)]
    return out


def fam_workload(rng, tmp: Path):
    src = rng.choice(WORKLOADS)
    d = tmp / "wl"
    shutil.copytree(src, d)
    files = sorted(p for p in d.rglob("*.csv") if "prev_analysis" not in str(p))
    f = rng.choice(files)
    text = f.read_text()
    r = rng.random()
    if r < 0.12:
        f.write_bytes(encode(text, rng))
    elif r < 0.16:
        f.unlink()
        f.mkdir()
    else:
        f.write_text(_mutate_csv(text, rng))
    args = ["validate", str(d), "--format", rng.choice(["json", "json", "jsonl"])]
    if rng.random() < 0.15:
        args += ["--sclk", rng.choice(["-5", "nan", "0", "inf", "1e9", "1500"])]
    if rng.random() < 0.1:
        args += ["--per-dispatch"]
    return args, [d]


def fam_manifest(rng, tmp: Path):
    src = ROCPROF / "rocprofiler-compute/tests_workloads_2024/vcopy/MI200"
    m = [{"match": "vecCopy", "case": {"kernel": "stream", "op": "copy", "n": 1 << 20}},
         {"dispatch": 0, "case": {"kernel": "elementwise", "n": 1 << 20}}]
    e = rng.choice(m)
    r = rng.random()
    if r < 0.4:
        e[rng.choice(["match", "dispatch"])] = rng.choice(BAD_YAML_VALUES + ["(a{1000000000})", "(", "a" * 500])
    elif r < 0.7:
        e["case"][rng.choice(list(e["case"]))] = rng.choice(BAD_YAML_VALUES)
    p = tmp / "manifest.yaml"
    try:
        text = yaml.safe_dump(m)
    except (OverflowError, ValueError):
        text = "[]\n"
    if rng.random() < 0.15:
        p.write_bytes(encode(text, rng))
    elif rng.random() < 0.05:
        p.write_text(bombs(rng))
    else:
        p.write_text(text)
    return ["validate", str(src), "--cases", str(p), "--format", "json"], [p]


LONG = ROCPROF / "rocm-systems/tests_workloads_2025/vcopy/MI300X_A1_rocpd/pmc_perf.csv"


def build_v3_dir(d: Path) -> None:
    """A rocprofv3 CSV run (counter collection, kernel trace, agent info) from real MI300X values."""
    with open(LONG, newline="") as fh:
        rows = list(csv.DictReader(fh))
    d.mkdir()
    with open(d / "1_counter_collection.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["Correlation_Id", "Dispatch_Id", "Agent_Id", "Grid_Size", "Kernel_Name", "Workgroup_Size",
                    "LDS_Block_Size", "Counter_Name", "Counter_Value"])
        for r in rows:
            w.writerow([r["Dispatch_ID"], r["Dispatch_ID"], "Agent 2", r["Grid_Size"], r["Kernel_Name"],
                        r["Workgroup_Size"], r["LDS_Per_Workgroup"], r["Counter_Name"], r["Counter_Value"]])
    with open(d / "1_kernel_trace.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["Kind", "Agent_Id", "Dispatch_Id", "Kernel_Name", "Start_Timestamp", "End_Timestamp",
                    "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"])
        for r in rows:
            if r["Counter_Name"] == "SQ_WAVES":
                w.writerow(["KERNEL_DISPATCH", "Agent 2", r["Dispatch_ID"], r["Kernel_Name"], r["Start_Timestamp"],
                            r["End_Timestamp"], r["Grid_Size"], 1, 1])
    (d / "1_agent_info.csv").write_text(
        "Node_Id,Agent_Type,Wave_Front_Size,Num_Xcc,Cu_Count,Name,Product_Name\n0,CPU,0,0,0,AMD EPYC,EPYC\n"
        "2,GPU,64,8,304,gfx942,AMD Instinct MI300X\n")


def fam_v3dir(rng, tmp: Path):
    d = tmp / "v3"
    build_v3_dir(d)
    f = rng.choice(sorted(d.glob("*.csv")))
    r = rng.random()
    if r < 0.1:
        f.write_bytes(encode(f.read_text(), rng))
    elif r < 0.15:
        (d / "2_agent_info.csv").write_text(
            "Node_Id,Agent_Type,Wave_Front_Size,Num_Xcc,Cu_Count,Name\n1,GPU,64,1,104,gfx90a\n")
    else:
        f.write_text(_mutate_csv(f.read_text(), rng))
    return ["validate", str(d), "--format", "json"], [d]


PASSES = ROCPROF / "derived/vcopy_MI300X_2pass"


def fam_passes(rng, tmp: Path):
    """A rocprofv3 two-pass folder (derived from real MI300X data): a mutated pass file, a pass
    dropped, a stray or second counter collection, a timing trace of another program."""
    d = tmp / "passes"
    shutil.copytree(PASSES, d)
    files = sorted(d.rglob("*.csv"))
    f = rng.choice(files)
    r = rng.random()
    if r < 0.08:
        f.write_bytes(encode(f.read_text(), rng))
    elif r < 0.14:
        shutil.rmtree(f.parents[1])  # pass_N/<host>/file -> pass_N gone
    elif r < 0.18:
        shutil.copy(f, d / rng.choice(["x_counter_collection.csv", "pass_1/9_counter_collection.csv"]))
    elif r < 0.24:
        t = d / "timing" / "1_kernel_trace.csv"
        t.parent.mkdir()
        t.write_text("Kind,Agent_Id,Dispatch_Id,Kernel_Name,Start_Timestamp,End_Timestamp,Grid_Size_X\n"
                     + "".join(f"KERNEL_DISPATCH,Agent {rng.choice([2, 3])},{i},{rng.choice(['k', 'vecCopy'])},"
                               f"{100 * i},{100 * i + rng.choice([-5, 0, 50])},{rng.choice([1048576, 1])}\n"
                               for i in range(1, 4)))
    else:
        f.write_text(_mutate_csv(f.read_text(), rng))
    return ["validate", str(d), "--format", rng.choice(["json", "table"])], [d]


SQL_BAD = [None, "abc", float("inf"), float("-inf"), float("nan"), -1, 2**63 - 1, b"\xff\x00", 1e300, "", 0]


def fam_sqlite(rng, tmp: Path):
    import sqlite3

    from test_readers_rocpd_sqlite import UUID, build_db

    p = tmp / "run.db"
    build_db(p, gfx_names=rng.choice([("gfx942",), ("gfx942",), ("gfx942", "gfx90a")]))
    r = rng.random()
    if r < 0.1:
        b = bytearray(p.read_bytes())
        for _ in range(rng.choice([1, 10, 100])):
            i = rng.randrange(100, len(b))
            b[i] = rng.randrange(256)
        p.write_bytes(bytes(b))
    elif r < 0.15:
        p.write_bytes(p.read_bytes()[: rng.randrange(16, 5000)])
    else:
        table, col = rng.choice([
            ("rocpd_kernel_dispatch", "start"), ("rocpd_kernel_dispatch", '"end"'),
            ("rocpd_kernel_dispatch", "dispatch_id"), ("rocpd_kernel_dispatch", "group_segment_size"),
            ("rocpd_kernel_dispatch", "grid_size_x"), ("rocpd_info_kernel_symbol", "kernel_name"),
            ("rocpd_pmc_event", "value"), ("rocpd_info_agent", "name"), ("rocpd_info_agent", "product_name"),
            ("rocpd_info_pmc", "name")])
        con = sqlite3.connect(p)
        try:
            con.execute(f"UPDATE `{table}{UUID}` SET {col} = ? WHERE id = (SELECT MIN(id) FROM `{table}{UUID}`)",
                        (rng.choice(SQL_BAD),))
            con.commit()
        except sqlite3.Error:
            pass
        con.close()
    return ["validate", str(p), "--format", "json"], [p]


JSON_BAD = [None, "abc", True, -1, 1.5, 2**70, 1e300, float("inf"), float("nan"), [], {}, ""]


def fam_v3json(rng, tmp: Path):
    """rocprofv3 JSON results (counter records of the real vcopy values): one value anywhere
    replaced, bytes flipped, or the file cut; read by validate or doctor."""
    from test_readers_rocprof_json import build_json

    p = tmp / rng.choice(["1_results.json", "1_results.json.gz"])
    doc = build_json(p)
    r = rng.random()
    if r < 0.1:
        b = bytearray(p.read_bytes())
        for _ in range(rng.choice([1, 10, 100])):
            b[rng.randrange(len(b))] = rng.randrange(256)
        p.write_bytes(bytes(b))
    elif r < 0.15:
        p.write_bytes(p.read_bytes()[: rng.randrange(1, 5000)])
    else:
        node, key = doc, "rocprofiler-sdk-tool"
        for _ in range(rng.randrange(1, 8)):
            child = node[key]
            keys = list(child) if isinstance(child, dict) else list(range(len(child))) if isinstance(child, list) else []
            if not keys:
                break
            node, key = child, rng.choice(keys)
        node[key] = rng.choice(JSON_BAD)
        p.write_text(json.dumps(doc))
    return [rng.choice(["validate", "doctor"]), str(p), "--format", "json"], [p]


TRACES = ("resnet_ddp_comms_cut.json.gz", "torch_compile_triton.json.gz", "mi250_minitoy_train_ROCm6_2_kineto.json.gz")


def fam_chrome(rng, tmp: Path):
    """torch.profiler chrome traces (the real test traces): one value of an event's args (shapes,
    concrete inputs, a collective's counts, External id, a duration) or of the metadata replaced,
    an event dropped, bytes flipped, or the file cut; read by validate (table, JSON or a chart),
    a what-if on another GPU, or doctor."""
    import gzip

    src = ROOT / "tests/data/traces" / rng.choice(TRACES)
    doc = json.loads(gzip.decompress(src.read_bytes()))
    evs = doc["traceEvents"]
    r = rng.random()
    if r < 0.15 and evs:
        del evs[rng.randrange(len(evs))]
    elif r < 0.25:
        doc[rng.choice(["deviceProperties", "distributedInfo", "traceEvents"])] = rng.choice(JSON_BAD)
    elif evs:
        ev = rng.choice(evs)
        target = ev.get("args") if isinstance(ev.get("args"), dict) and ev["args"] and rng.random() < 0.8 else ev
        key = rng.choice(list(target))
        value = target[key]
        if isinstance(value, list) and value and rng.random() < 0.5:  # one entry of Input Dims / Concrete Inputs
            value[rng.randrange(len(value))] = rng.choice(JSON_BAD + [[-1], [0, 0], ["x"], [[2**40]]])
        else:
            target[key] = rng.choice(JSON_BAD + [-5, 0, "[1, 2]", "True"])
    text = json.dumps(doc)
    p = tmp / rng.choice(["trace.json", "trace.json.gz", "trace.pt.trace.json"])
    data = text.encode()
    if rng.random() < 0.05:
        data = data[: rng.randrange(1, len(data))]
    elif rng.random() < 0.05:
        b = bytearray(data)
        for _ in range(rng.choice([1, 10, 100])):
            b[rng.randrange(len(b))] = rng.randrange(256)
        data = bytes(b)
    p.write_bytes(gzip.compress(data) if p.suffix == ".gz" else data)
    how = rng.choice(["json", "table", "arch", "chart", "doctor"])
    if how == "doctor":
        return ["doctor", str(p)], [p]
    if how == "chart":
        return ["validate", str(p), "-o", str(tmp / "chart.png")], [p]
    if how == "arch":
        return ["validate", str(p), "--arch", rng.choice(["mi355x", "h100", "rx7900xtx"]), "--format", "json"], [p]
    return ["validate", str(p), "--format", how], [p]


FAMILIES = {"archspec": fam_archspec, "cases": fam_cases, "kv": fam_kv, "workload": fam_workload,
            "manifest": fam_manifest, "v3dir": fam_v3dir, "passes": fam_passes, "sqlite": fam_sqlite,
            "v3json": fam_v3json, "chrome": fam_chrome}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=10_000, help="inputs to generate")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds before a run counts as a hang")
    ap.add_argument("--family", choices=sorted(FAMILIES), action="append")
    ap.add_argument("--keep", type=Path, help="copy failing inputs here")
    a = ap.parse_args(argv)
    import warnings

    warnings.simplefilter("always")  # every numpy overflow warning is seen, not only the first
    rng = random.Random(a.seed)
    fams = a.family or list(FAMILIES)
    counts: Counter = Counter()
    fails: list[str] = []
    for i in range(a.n):
        fam = fams[i % len(fams)]
        with tempfile.TemporaryDirectory(prefix="pmfuzz") as t:
            args, inputs = FAMILIES[fam](rng, Path(t))
            outcome, detail = run(args, a.timeout)
            counts[outcome] += 1
            if outcome not in ("exit0", "exit2"):
                fails.append(f"[{fam} #{i}] {outcome}: {detail.strip()[-400:]}")
                if a.keep:
                    dst = a.keep / f"{fam}_{i}"
                    dst.mkdir(parents=True, exist_ok=True)
                    (dst / "command.txt").write_text(" ".join(args) + "\n")
                    for src in inputs:
                        if src.is_dir():
                            shutil.copytree(src, dst / src.name)
                        else:
                            shutil.copy(src, dst / src.name)
        if (i + 1) % 500 == 0:
            print(f"{i + 1} inputs: {dict(counts)}", file=sys.stderr, flush=True)
    for f in fails[:50]:
        print(f)
    print(f"inputs {a.n}: " + ", ".join(f"{k} {counts[k]}" for k in
                                         ("exit0", "exit2", "traceback", "multiline", "hang", "insane")))
    return 1 if any(counts[k] for k in ("traceback", "multiline", "hang", "insane")) else 0


if __name__ == "__main__":
    sys.exit(main())
