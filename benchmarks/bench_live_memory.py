"""What one live reader's query costs the writing process in memory (design §35.8).

A writer (a results file holding 100 messages of 5 KB, serving readers as a run does)
runs in a process of its own; a reader sends each query; the writer's peak resident
memory (VmHWM from /proc) is read before and after, with the query's time and answer.
Each query runs against a fresh writer, so one peak does not hide the next.

    python benchmarks/bench_live_memory.py            # the default queries
    python benchmarks/bench_live_memory.py "SELECT …"  # others
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
import time

QUERIES = [
    # a 1.5 GB list: one value, built by DuckDB, then held by Python and JSON
    "SELECT list(a.content_json) FROM messages a, messages b, "
    "(SELECT * FROM messages LIMIT 30) c",
    # a 630 MB string
    "SELECT string_agg(a.content_json, '') FROM messages a, messages b, "
    "(SELECT * FROM messages LIMIT 20) c",
    # many rows of 10 KB (refused by the answer's cap)
    "SELECT a.content_json || b.content_json FROM messages a, messages b",
]

WRITER = """
import sys
from vendbench.results import Store
s = Store({db!r})
s.con.execute("INSERT INTO runs (run_id, created_at, scenario, days, config_json, status) "
              "VALUES ('R', now(), 'autovend', 3, '{{}}', 'running')")
for i in range(100):
    s.con.execute("INSERT INTO messages (trial_id, msg_id, role, content_json, tokens) "
                  "VALUES ('T', ?, 'user', ?, 0)", [i, 'x' * 5000])
s.serve_readers({{'run_id': 'R'}})
print('ready', flush=True)
sys.stdin.read()
s.close()
"""


def peak_mb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        line = next(x for x in f if x.startswith("VmHWM"))
    return int(line.split()[1]) // 1024


def one(sql: str) -> None:
    folder = tempfile.mkdtemp(prefix="vb-mem-", dir="/tmp")   # a short socket path
    os.environ["TMPDIR"] = folder
    tempfile.tempdir = None                    # where both sides look for the socket
    db = f"{folder}/w.duckdb"
    writer = subprocess.Popen([sys.executable, "-c", textwrap.dedent(WRITER.format(db=db))],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
    from vendbench.results import _live

    before = peak_mb(writer.pid)
    reader = _live.connect(db)
    assert reader is not None
    started = time.monotonic()
    try:
        rows = reader.execute(sql).fetchall()
        answer = f"{len(rows)} row(s)"
    except Exception as exc:                   # the refusal is the measurement
        answer = f"{type(exc).__name__}: {str(exc)[:100]}"
    took = time.monotonic() - started
    print(f"{sql[:70]}…\n  writer {before:,} -> {peak_mb(writer.pid):,} MB peak; "
          f"{took:.1f} s; {answer}")
    reader.close()
    assert writer.stdin is not None
    writer.stdin.close()
    writer.wait()


def main() -> None:
    for sql in sys.argv[1:] or QUERIES:
        one(sql)


if __name__ == "__main__":
    main()
