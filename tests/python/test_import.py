"""versus import: the real outputs of OSU 5.3 and 7.4, IMB 2021.11, NetPIPE 3.7.2,
ucx_perftest 1.13 and fi_pingpong (libfabric 1.17) in data/import (data/import/README.md
says how each was made) become summary records with the right sizes, statistics and
unit conversions; each conversion is checked against the tool's own other column
(bandwidth against bytes over time), so a wrong unit fails."""
import json
import os

import numpy as np
import pytest

from versus.importers import guess_format, import_file, import_text, write_jsonl
from versus.load import InputError, load_file
from versus.sidebyside import side_by_side

HERE = os.path.dirname(os.path.abspath(__file__))
D = os.path.join(HERE, "data", "import")


def imp(name, **kw):
    runs, _ = import_file(os.path.join(D, name), **kw)
    return runs


def raw_rows(name, first_field_digit=True):
    with open(os.path.join(D, name), encoding="utf-8") as f:
        return [ln.split() for ln in f if ln.strip() and ln.split()[0][0].isdigit()]


@pytest.mark.parametrize("name, fmt", [
    ("osu_latency-5.3.txt", "osu"), ("osu_bw-5.3.txt", "osu"), ("osu_latency-7.4.txt", "osu"),
    ("osu_latency-7.4-tail.txt", "osu"), ("osu_bw-7.4.txt", "osu"), ("imb-mpi1.txt", "imb"),
    ("netpipe-tcp-stdout.txt", "netpipe"), ("np-tcp.out", "netpipe"), ("ucx_perftest.txt", "ucx_perftest"),
    ("ucx_perftest-f.txt", "ucx_perftest"), ("fi_pingpong-tcp.txt", "fi_pingpong")])
def test_format_guessed(name, fmt):
    with open(os.path.join(D, name), encoding="utf-8") as f:
        assert guess_format(f.read(), name) == fmt


def test_osu_5_and_7_latency():
    (a,) = imp("osu_latency-5.3.txt")
    (b,) = imp("osu_latency-7.4.txt")
    assert (a.test, a.version, a.pattern, a.statistic) == ("osu_latency", "5.3", "pingpong", "mean")
    assert (b.test, b.version) == ("osu_latency", "7.4")
    assert any("datatype: MPI_CHAR" in c for c in b.conversions)
    rows = raw_rows("osu_latency-5.3.txt")
    assert [r["bytes"] for r in a.rows] == [int(r[0]) for r in rows]
    assert all(r["one_way_ns"] == pytest.approx(float(x[1]) * 1e3) for r, x in zip(a.rows, rows))
    assert a.command.startswith("mpirun -n 2")


def test_osu_7_tail_latencies():
    (t,) = imp("osu_latency-7.4-tail.txt")
    r = t.rows[0]
    assert {"one_way_ns", "p50_one_way_ns", "p90_one_way_ns", "p99_one_way_ns"} <= set(r)
    assert r["p50_one_way_ns"] <= r["p99_one_way_ns"]


@pytest.mark.parametrize("name", ["osu_bw-5.3.txt", "osu_bw-7.4.txt"])
def test_osu_bandwidth_is_stream_in_decimal_megabytes(name):
    (b,) = imp(name)
    assert b.pattern == "stream" and b.test == "osu_bw"
    rows = raw_rows(name)
    assert [r["bandwidth_MBps"] for r in b.rows] == [float(x[1]) for x in rows]
    assert any("10^6" in c for c in b.conversions)


def test_imb_pingpong_of_several_tables():
    (p,) = imp("imb-mpi1.txt")
    assert (p.test, p.version, p.pattern) == ("PingPong", "2021.11", "pingpong")
    assert "PingPing" in p.unknown[-1] and "Sendrecv" in p.unknown[-1]
    assert p.command.split()[0].endswith("IMB-MPI1")
    big = [r for r in p.rows if r["bytes"] >= 4096]
    # IMB 2021's Mbytes/sec is 10^6 B/s: bytes over the one-way time says the same
    for r in big:
        assert r["bandwidth_MBps"] == pytest.approx(r["bytes"] / r["one_way_ns"] * 1e3, rel=0.01)
    assert [r["iterations"] for r in p.rows][:1] == [1000]


def test_imb_before_2018_meant_binary_megabytes():
    text = open(os.path.join(D, "imb-mpi1.txt"), encoding="utf-8").read().replace("2021.11", "2017.0")
    (p,) = import_text(text, "old.txt")
    (q,) = imp("imb-mpi1.txt")
    assert p.rows[-1]["bandwidth_MBps"] == pytest.approx(q.rows[-1]["bandwidth_MBps"] * 1048576 / 1e6)
    assert any("2^20" in c for c in p.conversions)


@pytest.mark.parametrize("name", ["netpipe-tcp-stdout.txt", "np-tcp.out"])
def test_netpipe_mbps_is_binary_and_time_one_way(name):
    (n,) = imp(name)
    assert n.pattern == "pingpong" and len(n.rows) > 100
    # NetPIPE's Mbps divides bits by 2^20: converted to 10^6 B/s it equals bytes over its time
    for r in n.rows:
        if r["bytes"] >= 1024:
            assert r["bandwidth_MBps"] == pytest.approx(r["bytes"] / r["one_way_ns"] * 1e3, rel=0.01)


def test_netpipe_stdout_and_file_of_one_run_agree():
    (a,) = imp("netpipe-tcp-stdout.txt")
    (b,) = imp("np-tcp.out")
    assert a.test == "NPtcp"
    fa = {r["bytes"]: r["one_way_ns"] for r in a.rows}
    fb = {r["bytes"]: r["one_way_ns"] for r in b.rows}
    assert set(fa) == set(fb)
    assert all(fa[k] == pytest.approx(fb[k], rel=0.01, abs=20) for k in fa)


def test_ucx_perftest_table_and_f():
    lat, bw = imp("ucx_perftest.txt")
    assert (lat.test, lat.pattern, lat.statistic) == ("tag_lat", "pingpong", "50th percentile")
    assert [r["bytes"] for r in lat.rows] == [8, 65536]
    assert (bw.test, bw.pattern) == ("tag_bw", "stream")
    for r in lat.rows:    # MiB/s converted: the same as bytes over the mean one-way time
        assert r["mean_bandwidth_MBps"] == pytest.approx(r["bytes"] / r["mean_one_way_ns"] * 1e3, rel=0.02)
    (f,) = imp("ucx_perftest-f.txt")
    assert [r["bytes"] for r in f.rows] == [8, 4096]


def test_ucx_perftest_sizes_from_the_user_when_the_file_has_no_command():
    text = "\n".join(ln for ln in open(os.path.join(D, "ucx_perftest-f.txt"), encoding="utf-8")
                     .read().splitlines() if not ln.startswith("$ "))
    with pytest.raises(InputError, match="no message size"):
        import_text(text, "f.txt", "ucx_perftest")
    with pytest.raises(InputError, match="which test"):
        import_text(text, "f.txt", "ucx_perftest", sizes=[8, 4096])


def test_fi_pingpong_newer_header_and_suffixes():
    (p,) = imp("fi_pingpong-tcp.txt")
    sizes = [r["bytes"] for r in p.rows]
    assert 1536 in sizes and 1024 in sizes and sizes == sorted(sizes)
    assert all(r["iterations"] == 1000 for r in p.rows)
    assert p.library == "libfabric provider tcp"
    for r in p.rows:
        if 1024 <= r["bytes"] <= 65536:
            assert r["bandwidth_MBps"] == pytest.approx(r["bytes"] / r["one_way_ns"] * 1e3, rel=0.02)


def test_fi_pingpong_older_header():
    text = ("bytes   iters   total       time     MB/sec    usec/xfer   Mxfers/sec\n"
            "64      10k     1.2m        0.05s     25.00       2.56       0.39\n")
    (p,) = import_text(text, "old.txt")
    assert p.rows == [{"bytes": 64, "iterations": 10000, "one_way_ns": 2560.0, "bandwidth_MBps": 25.0}]


def test_refusals():
    with pytest.raises(InputError, match="looks like"):
        import_text(open(os.path.join(D, "osu_latency-5.3.txt")).read() + "\n# Benchmarking PingPong\n", "x")
    with pytest.raises(InputError, match="twice"):
        import_text("# OSU MPI Latency Test v5.3\n# Size  Latency (us)\n8  1.0\n8  1.1\n", "x")
    with pytest.raises(InputError, match="no PingPong"):
        import_text("#    Intel(R) MPI Benchmarks 2021.11, MPI-1 part\n# Benchmarking Barrier\n", "x")


def test_jsonl_round_trip_keeps_what_is_known(tmp_path):
    runs, text = import_file(os.path.join(D, "imb-mpi1.txt"))
    out = tmp_path / "imb.jsonl"
    write_jsonl(runs, "imb-mpi1.txt", text, str(out))
    (r,) = load_file(out)
    assert r.imported["tool"] == "Intel MPI Benchmarks" and r.imported["version"] == "2021.11"
    assert r.imported["statistic"] == "mean" and r.imported["source_sha256"]
    assert len(r.summaries) == 22 and r.sizes == [] and r.status == "ok"
    line = json.loads(out.read_text().splitlines()[1])
    assert line["record"] == "summary" and "samples_ns" not in line


def test_a_summary_record_in_a_measured_run_is_refused(tmp_path, data_dir):
    lines = open(os.path.join(data_dir, "shm-pingpong.jsonl"), encoding="utf-8").read().splitlines()
    lines.insert(1, json.dumps({"record": "summary", "bytes": 8, "one_way_ns": 100.0}))
    p = tmp_path / "x.jsonl"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match="measured run"):
        load_file(p)


def test_side_by_side_same_statistic(make_run, tmp_path):
    """versus's mean beside OSU's mean: the ratio and whether OSU's figure lies in versus's interval."""
    import synth
    measured = make_run(synth.hockney(500.0, 0.05), [8, 64, 1024], count=400, rel_noise=0.01, outlier_frac=0)
    text = ("# OSU MPI Latency Test v5.3\n# Size          Latency (us)\n"
            "8                       0.25\n64                      0.50\n1024                    1.00\n")
    runs = import_text(text, "osu.txt")
    p = tmp_path / "osu.jsonl"
    write_jsonl(runs, "osu.txt", text, str(p))
    (osu,) = load_file(p)
    d = side_by_side([measured], osu)
    assert d["versus_statistic"] == "mean one-way time" and [r["bytes"] for r in d["rows"]] == [8, 64, 1024]
    ours = {b: float(np.mean(x)) for b, x in __import__("versus.samples", fromlist=["x"]).reported(measured).items()}
    for r in d["rows"]:
        assert r["versus"] == pytest.approx(ours[r["bytes"]])
        assert r["ratio"] == pytest.approx(r["tool"] / r["versus"])
        assert r["inside"] == (r["versus_ci"][0] <= r["tool"] <= r["versus_ci"][1])
    assert "no interval of the difference" in d["note"]
