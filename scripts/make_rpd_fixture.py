"""Build tests/data/traces/mytrace_cut.rpd from the real RPD database in the project's shared
data (rocmProfileData raptor/tests/mytrace.rpd.gz: rpd_tracer, vLLM FP8 inference on 8 gfx942
GPUs, schema_version 2).

Kept as recorded: the schema (tables, views), rocpd_metadata, rocpd_string and every row of the
first 40 kernel dispatches (rocpd_op rows launched by a rocpd_kernelapi call), the API calls that launched them and the first 60 API calls,
with the rows that refer to those (rocpd_api_ops, rocpd_kernelapi, rocpd_copyapi,
ext_autogradapi); the first 10 rocpd_monitor samples; ext_callstack is emptied. No value is changed. VACUUMed, so a rerun gives the
same content.

    python scripts/make_rpd_fixture.py [SOURCE]
"""

from __future__ import annotations

import gzip
import shutil
import sqlite3
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT.parent / "shared/data/traces/rocmProfileData/raptor/tests/mytrace.rpd.gz"
TARGET = ROOT / "tests/data/traces/mytrace_cut.rpd"
DELETE = (
    "DELETE FROM rocpd_op WHERE id NOT IN (SELECT op_id FROM rocpd_api_ops WHERE api_id IN"
    " (SELECT api_ptr_id FROM rocpd_kernelapi) ORDER BY op_id LIMIT 40)",
    "DELETE FROM rocpd_api WHERE id NOT IN (SELECT id FROM rocpd_api ORDER BY id LIMIT 60)"
    " AND id NOT IN (SELECT api_id FROM rocpd_api_ops WHERE op_id IN (SELECT id FROM rocpd_op))",
    "DELETE FROM rocpd_api_ops WHERE op_id NOT IN (SELECT id FROM rocpd_op)",
    "DELETE FROM rocpd_kernelapi WHERE api_ptr_id NOT IN (SELECT id FROM rocpd_api)",
    "DELETE FROM rocpd_copyapi WHERE api_ptr_id NOT IN (SELECT id FROM rocpd_api)",
    "DELETE FROM ext_autogradapi WHERE api_ptr_id NOT IN (SELECT id FROM rocpd_api)",
    "DELETE FROM rocpd_monitor WHERE id NOT IN (SELECT id FROM rocpd_monitor ORDER BY id LIMIT 10)",
    "DELETE FROM ext_callstack",
)


def main() -> None:
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else SOURCE
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    tmp = TARGET.with_suffix(".tmp")
    with gzip.open(src, "rb") as f, open(tmp, "wb") as g:
        shutil.copyfileobj(f, g)
    con = sqlite3.connect(tmp)
    for sql in DELETE:
        con.execute(sql)
    con.commit()
    con.execute("VACUUM")
    con.close()
    tmp.replace(TARGET)
    print(f"{TARGET}: {TARGET.stat().st_size} bytes")


if __name__ == "__main__":
    main()
