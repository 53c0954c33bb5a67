"""mvlib.book's bench helpers: a fit in a child process, time and memory of a call, headers, rows, parts."""
from __future__ import annotations

import json
import os
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import mvlib.book._runs as runs
from mvlib.book import (ChildError, child_reply, environment, format_row, machine_line, max_rss_gib, measure_call,
                        median_timed, merged_sections, run_child, run_parts, thread_env, thread_limit, versions_line)

ROOT = Path(__file__).resolve().parents[3]

CHILD = """\
import json, os, sys
assert sys.argv[1] == "--child", sys.argv
spec = json.loads(sys.argv[2])
if spec.get("fail"):
    sys.exit(spec["fail"])
if spec.get("silent"):
    sys.exit(0)
if spec.get("sleep"):
    import time
    time.sleep(spec["sleep"])
print("progress lines come first")
print(json.dumps({"spec": spec, "extra": sys.argv[3:], "omp": os.environ.get("OMP_NUM_THREADS"),
                  "blas": os.environ.get("OPENBLAS_NUM_THREADS"), "tag": os.environ.get("BENCH_TAG")}))
"""


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "child.py"
    path.write_text(CHILD)
    return path


# --------------------------------------------------------------------------- child processes
def test_run_child_reads_the_last_json_line_with_threads_and_env(script, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    monkeypatch.setenv("BENCH_TAG", "outer")
    out = run_child(script, json.dumps({"n": 3}), 4, threads=2, env={"BENCH_TAG": "inner"})
    assert out == {"spec": {"n": 3}, "extra": ["4"], "omp": "2", "blas": "2", "tag": "inner"}
    # without threads, the child inherits this process's thread variables
    assert run_child(script, "{}")["omp"] == "7"


def test_run_child_raises_child_error_with_what_failed(script):
    with pytest.raises(ChildError) as info:
        run_child(script, json.dumps({"fail": "no corpus\nrank too small"}))
    e = info.value
    assert e.returncode == 1 and not e.timed_out
    assert e.last_line == "rank too small" == str(e)
    assert "no corpus" in e.stderr
    # a clean exit that answers nothing is a failure too
    with pytest.raises(ChildError) as info:
        run_child(script, json.dumps({"silent": True}))
    assert info.value.returncode == 0 and info.value.last_line == "exit code 0"


def test_run_child_stops_a_child_at_the_timeout(script):
    with pytest.raises(ChildError) as info:
        run_child(script, json.dumps({"sleep": 30}), timeout=0.5)
    assert info.value.timed_out and info.value.returncode is None


def test_child_reply_prints_one_json_line(capsys):
    child_reply({"method": "spectral", "seconds": 1.25, "warnings": []})
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    assert json.loads(out) == {"method": "spectral", "seconds": 1.25, "warnings": []}


# --------------------------------------------------------------------------- threads
def test_thread_env_sets_every_pool_variable():
    env = thread_env(3)
    assert set(env) >= {"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"}
    assert set(env.values()) == {"3"}


def test_thread_limit_limits_blas_and_keeps_the_defaults_for_zero_or_none():
    threadpoolctl = pytest.importorskip("threadpoolctl")

    def blas():
        return [p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]

    before = blas()
    with thread_limit(1, "blas"):
        assert all(n == 1 for n in blas())
    assert blas() == before
    for no_limit in (None, 0, -1):
        with thread_limit(no_limit):
            assert blas() == before


# --------------------------------------------------------------------------- memory and time
def test_measure_call_sees_the_memory_a_call_adds_and_its_warnings():
    def fit(n):
        x = np.ones(n)                     # n float64 touched: n * 8 bytes resident
        warnings.warn("slow start " + "x" * 300)
        warnings.warn("slow start " + "x" * 300)
        warnings.warn("merged", RuntimeWarning)
        return float(x.sum())

    n = 96 * 2**20 // 8                    # 96 MiB
    m = measure_call(fit, n)
    assert m.result == n and m.seconds >= 0 and m.peak_reset
    assert 0.08 < m.fit_gib < 1.0          # ~0.094 GiB, plus what NumPy needs on the side
    assert m.fit_gib == pytest.approx(m.rss_peak_gib - m.rss_before_gib)
    assert m.memory() == {"rss_before_gib": m.rss_before_gib, "rss_peak_gib": m.rss_peak_gib, "fit_gib": m.fit_gib}
    assert m.warnings == ["RuntimeWarning: merged", "UserWarning: " + ("slow start " + "x" * 300)[:160]]
    # a second, small call does not carry the first one's peak (the counter was reset)
    assert measure_call(sum, [1, 2]).fit_gib < 0.05


def test_measure_call_falls_back_to_the_lifetime_peak(monkeypatch):
    import mvlib.book._bench as bench

    def refused():
        raise PermissionError("clear_refs")

    monkeypatch.setattr(bench, "reset_peak_rss", refused)
    m = measure_call(sum, [1, 2])
    assert not m.peak_reset and m.result == 3
    assert m.rss_peak_gib == pytest.approx(max_rss_gib(), abs=0.01)


def test_median_timed_counts_repeats_and_stops_at_the_budget(monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(runs.time, "perf_counter", lambda: clock[0])

    def work(durations):
        def fn(tag):
            clock[0] += next(durations)
            return tag
        return fn

    t = median_timed(work(iter([3.0, 1.0, 2.0, 9.0])), "T", repeats=3)
    assert (t.seconds, t.times, t.runs, t.result) == (2.0, [3.0, 1.0, 2.0], 3, "T")
    t = median_timed(work(iter([3.0, 1.0, 2.0])), "T", repeats=3, budget=3.5)
    assert (t.seconds, t.times) == (2.0, [3.0, 1.0])
    assert median_timed(work(iter([5.0, 1.0])), "T", repeats=4, budget=5.0).runs == 1


# --------------------------------------------------------------------------- headers, rows, parts
def test_environment_and_header_lines():
    env = environment(sklearn="1.5.2", mvlib="0.1")
    assert list(env) == ["python", "numpy", "sklearn", "mvlib", "machine", "nproc"]
    assert env["numpy"] == np.__version__ and env["nproc"] == os.cpu_count()
    line = versions_line(**{"scikit-learn": "1.5.2", "mvlib": "0.1"})
    assert line == f"python {env['python']}, numpy {np.__version__}, scikit-learn 1.5.2, mvlib 0.1"
    assert machine_line(1.234) == f"{env['machine']}, nproc {os.cpu_count()}, load average 1.23"
    assert re.fullmatch(r".+, nproc \d+, load average \d+\.\d\d", machine_line())


def test_format_row_is_the_fixed_width_row_of_the_benches():
    name, err, secs, ratio = "spectral->EM", 0.01234, 12.5, 31.25
    widths = (14, 8, 9, 11)
    expected = f"  {name:14s} {err:8.4f} {secs:9.2f} {ratio:10.1f}x"
    assert format_row([name, f"{err:.4f}", f"{secs:.2f}", f"{ratio:.1f}x"], widths) == expected
    assert format_row(["k", "12.0x"], (3, 8), indent="", sep="  ") == "k       12.0x"
    assert format_row(["a-long-label", "1"], (4, 2)) == "  a-long-label  1"   # a long cell is not cut


def test_run_parts_times_each_part_and_hands_on_the_earlier_ones(capsys):
    seen = []

    def run(part, done):
        seen.append((part, sorted(done)))
        return {"value": len(done)}

    res = run_parts(["compare", "sweep"], run)
    assert seen == [("compare", []), ("sweep", ["compare"])]
    assert list(res) == ["compare", "sweep"] and res["sweep"]["value"] == 1
    assert all(r["part_seconds"] >= 0 for r in res.values())
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["[compare", "[sweep"]
    assert all(re.fullmatch(r"\[\w+: \d+ s, load \d+\.\d\d\]", line) for line in lines)


def test_merged_sections_keeps_or_drops_the_other_sections(tmp_path):
    path = tmp_path / "bench.json"
    assert merged_sections(path, {"dense": 1}, keep_others=True) == {"dense": 1}   # no file yet
    path.write_text(json.dumps({"scale": {"seconds": 2}, "dense": 0, "environment": "old"}))
    assert merged_sections(path, {"dense": 1}, keep_others=True) == {"scale": {"seconds": 2}, "dense": 1,
                                                                      "environment": "old"}
    assert merged_sections(path, {"dense": 1}, keep_others=False) == {"dense": 1}


def test_docstring_examples_run():
    import doctest

    import mvlib.book._bench as bench

    result = doctest.testmod(bench, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 20


def test_bench_scripts_use_the_shared_helpers_instead_of_retyping_them():
    # code, not prose: the docstrings may name /proc/self/status or resource.getrusage
    retyped = re.compile(r"open\(\"/proc/self/|getrusage\(|^import resource$"
                         r"|^def (timed|run_child|_jsonable|_rounded|_status|_reset_peak)\(", re.M)
    scripts = sorted((ROOT / "bench").glob("bench_*.py"))
    assert scripts, "no bench scripts found"
    found = {p.name: retyped.findall(p.read_text(encoding="utf-8")) for p in scripts}
    assert not {name: hits for name, hits in found.items() if hits}
