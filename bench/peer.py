"""Our OpenCost path beside `unalloc` (PyPI), both in fresh processes on one /allocation body.

unalloc reads OpenCost's allocation JSON, attributes each row to a label and reports what is
unattributed: the same decode-and-attribute work as our OpenCost source and join. It is
installed in its own virtual environment under the bench cache, so neither sees the other's
packages; when it cannot be installed (offline, say) the table is skipped with the reason.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

from bench.synthetic import Size

__all__ = ["compare"]

PEER = "unalloc==0.3.2"
ALLOCATIONS = 50_000


def _venv(cache: Path) -> Path | None:
    """The peer's interpreter, installing it once; None (and why, printed) when that fails."""
    home = cache / "unalloc-venv"
    binary = home / "bin" / "python"
    if (home / "bin" / "unalloc").exists():
        return binary
    venv.create(home, with_pip=True, clear=True)
    pip = [str(home / "bin" / "python"), "-m", "pip", "install", "--quiet", PEER]
    result = subprocess.run(pip, capture_output=True, text=True, check=False)
    if result.returncode != 0 or not (home / "bin" / "unalloc").exists():
        last = (result.stderr.strip().splitlines() or ["no output"])[-1]
        print(f"\n3. skipped: `pip install {PEER}` failed ({last})")
        return None
    return binary


def _payload(cache: Path, size: Size, out: Path) -> int:
    """The largest cached /allocation body, its set repeated under new names to 50,000 rows."""
    bodies = sorted((cache / size.name / "opencost").glob("*.body"), key=lambda p: p.stat().st_size)
    body = json.loads(bodies[-1].read_bytes())
    step = body["data"][0]
    rows = {k: v for k, v in step.items() if k != "__idle__"}
    grown: dict[str, object] = {}
    copy = 0
    while len(grown) < ALLOCATIONS:
        for name, row in rows.items():
            key = f"{name}-{copy}" if copy else name
            grown[key] = {**row, "name": key}
            if len(grown) == ALLOCATIONS:
                break
        copy += 1
    if "__idle__" in step:
        grown["__idle__"] = step["__idle__"]
    out.mkdir(parents=True, exist_ok=True)
    (out / "opencost_allocation.json").write_text(
        json.dumps({"code": 200, "data": [grown]}), encoding="utf-8"
    )
    return len(grown) - ("__idle__" in grown)


# Run the peer's CLI in its own interpreter and write that interpreter's VmHWM at exit:
# ru_maxrss would keep the forking parent's peak (Linux carries it across exec).
_WRAP = """
import atexit, os, sys
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            open(os.environ["BENCH_HWM"], "w").write(line.split()[1])
atexit.register(hwm)
sys.argv = ["unalloc", *sys.argv[1:]]
from unalloc.cli import main
main()
"""


def _measure(command: list[str], hwm: Path | None = None) -> tuple[float, float]:
    """CPU-s (wait4) and peak RSS in MiB (the child's JSON, or the file `hwm`) of one child."""
    env = {**os.environ, "BENCH_HWM": str(hwm)} if hwm else None
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(command, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)  # reaps it: Popen must not wait as well
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        printed, error = out.read(), err.read()
    if proc.returncode != 0:
        raise RuntimeError(f"{command[0]} exited {proc.returncode}: {error.decode()[-300:]}")
    cpu = usage.ru_utime + usage.ru_stime
    rss = int(hwm.read_text()) / 1024 if hwm else float(json.loads(printed.splitlines()[-1])["rss"])
    return cpu, rss


def compare(cache: Path, size: Size, runs: int) -> None:
    """Table 3: the OpenCost path, ours and unalloc's, medians of `runs` fresh processes."""
    binary = _venv(cache)
    if binary is None:
        return
    fixtures = cache / "peer"
    rows = _payload(cache, size, fixtures)
    body = fixtures / "opencost_allocation.json"
    ours = [sys.executable, "-m", "bench.opencost_path", str(body)]
    peer = [str(binary), "-c", _WRAP, "report", "--source", "opencost", "--fixtures"]
    peer += ["--fixture-dir", str(fixtures), "--json"]
    mine = [_measure(ours) for _ in range(runs)]
    theirs = [_measure(peer, fixtures / "hwm") for _ in range(runs)]
    print(
        f"\n3. OpenCost path on one /allocation body: {rows:,} allocations and __idle__, "
        f"{body.stat().st_size / 2**20:.0f} MiB (median of {runs} fresh processes)"
    )
    print(f"   {'':<30} {'CPU-s':>7} {'peak RSS MiB':>12}")
    cpu, rss = (statistics.median(m[i] for m in mine) for i in (0, 1))
    peer_cpu, peer_rss = (statistics.median(t[i] for t in theirs) for i in (0, 1))
    print(f"   {'ours: parse, join, render':<30} {cpu:>7.2f} {rss:>12.0f}")
    print(f"   {'unalloc 0.3.2 report --json':<30} {peer_cpu:>7.2f} {peer_rss:>12.0f}")
    print(f"   {'ratio unalloc / ours':<30} {peer_cpu / cpu:>6.2f}x {peer_rss / rss:>11.2f}x")
