"""samples.parquet (always) and samples.csv (versus report --csv) hold every sample of every
run, a row each, with the values and labels of the JSON Lines they came from."""
import csv

import numpy as np
import pyarrow.parquet as pq

import synth
from versus.load import load_file
from versus.report import render_report


def test_every_sample_is_exported_once_with_its_labels(tmp_path):
    a = synth.write_run(tmp_path / "a.jsonl", synth.hockney(2000, 0.1), [0, 8, 1024], count=37, seed=1, name="a")
    b = synth.write_run(tmp_path / "b.jsonl", synth.hockney(900, 0.05), [8, 65536], count=11, seed=2, name="b,c",
                        provider="sysv/memory, cma/memory")
    runs = [load_file(p)[0] for p in (a, b)]
    out = tmp_path / "report"
    model = render_report([str(a), str(b)], out, csv=True)
    expect = sum(s.samples_ns.size for r in runs for s in r.sizes)
    assert model["samples"] == expect == 3 * 37 + 2 * 11
    with open(out / "samples.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    table = pq.read_table(out / "samples.parquet").to_pydict()
    assert len(rows) == len(table["sample_ns"]) == expect
    for r in runs:
        src = r.source.rsplit("/", 1)[-1]
        for s in r.sizes:
            got = [row for row in rows if row["source"] == src and int(row["bytes"]) == s.bytes]
            assert [int(row["sample_ns"]) for row in got] == s.samples_ns.tolist()
            assert [int(row["sample_index"]) for row in got] == list(range(s.samples_ns.size))
            assert all(float(row["reported_ns"]) == v / 2 for row, v in zip(got, s.samples_ns.tolist()))
            pq_ns = [v for v, so, by in zip(table["sample_ns"], table["source"], table["bytes"])
                     if so == src and by == s.bytes]
            assert pq_ns == s.samples_ns.tolist()
    # a label with a comma survives the CSV (quoted) and the Parquet file
    assert {row["provider"] for row in rows} == {"", "sysv/memory, cma/memory"}
    assert set(table["provider"]) == {"", "sysv/memory, cma/memory"}
    assert {row["reported_as"] for row in rows} == {"one-way latency (round trip / 2)"}
    assert np.isclose(sum(table["reported_ns"]), sum(int(r["sample_ns"]) for r in rows) / 2)


def test_parquet_by_default_csv_on_request(tmp_path):
    a = synth.write_run(tmp_path / "a.jsonl", synth.hockney(2000, 0.1), [8, 1024], count=21, seed=3, name="a")
    run = load_file(a)[0]
    out = tmp_path / "report"
    model = render_report([str(a)], out)
    assert (out / "samples.parquet").exists() and not (out / "samples.csv").exists()
    table = pq.read_table(out / "samples.parquet").to_pydict()
    assert model["samples"] == len(table["sample_ns"]) == 2 * 21
    for s in run.sizes:     # recomputable from the Parquet file alone: the samples, in order
        assert [v for v, by in zip(table["sample_ns"], table["bytes"]) if by == s.bytes] == s.samples_ns.tolist()
    render_report([str(a)], out, csv=True)      # asked for: written beside, the same rows
    with open(out / "samples.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["sample_ns"]) for r in rows] == table["sample_ns"]
