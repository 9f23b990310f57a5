"""Seed-study tables as data."""
import numpy as np
import pytest

import synth
from versus.analysis import analyse_run
from versus.studies import control_limits, run_statistics, variant_table

POW2 = [1 << k for k in range(0, 17)]     # 1 .. 64 KiB (seed 000 went to 4 KiB)


def knee(lat_ns, buf, r):
    return lambda n: lat_ns if n < buf else lat_ns + r * (n - buf)


def test_variant_table_uses_send_and_receive_times_when_the_records_carry_them(make_run):
    run = make_run(synth.hockney(5000, 0.0), POW2, count=160, seed=1, variant="nonblocking",
                   extra={"send_ns": knee(310e3, 1024, 1.8), "recv_ns": knee(434e3, 256, 21.0)})
    (row,) = variant_table([run])
    assert row["source"].startswith("send_ns")
    # extras are drawn like round trips (2x), so the table sees twice the model
    assert row["send_latency_us"] == pytest.approx(620, rel=0.02)
    assert row["receive_latency_us"] == pytest.approx(868, rel=0.02)
    # the knee is a slope change, located between two measured sizes (2 % noise)
    for side, knee_at in (("send", 1024), ("receive", 256)):
        lo, hi = row[f"{side}_buffer_between_bytes"]
        assert lo // 2 <= knee_at <= hi and hi <= 2 * lo      # within one grid step
    # send: the fitted asymptote (1/3.6 bytes/ns) lies far beyond what the sweep reaches at
    # 64 KiB (28 % of it): not determined, so the bandwidth is the measured peak, bytes over
    # the median call time at the best size; receive: 64 KiB reaches 76 % of 1/42 bytes/ns,
    # so the fitted asymptote is determined and is the figure
    by = run.sizes_by_bytes()
    peak = max(b / np.median(s.extra["send_ns"]) * 1e3 for b, s in by.items() if b > 0)
    assert row["send_bandwidth_MBps"] == pytest.approx(peak)
    assert row["send_bandwidth_kind"].startswith("peak measured")
    assert row["receive_bandwidth_MBps"] == pytest.approx(1 / 42 * 1e3, rel=0.05)
    assert row["receive_bandwidth_kind"].startswith("fitted asymptotic")


def test_variant_table_falls_back_to_one_way_ping_pong_time(make_run):
    run = make_run(knee(300e3, 1024, 2.0), POW2, count=160, seed=2, variant="blocking")
    (row,) = variant_table([run])
    assert "round trip / 2" in row["source"]
    assert row["send_latency_us"] == row["receive_latency_us"] == pytest.approx(300, rel=0.02)
    lo, hi = row["send_buffer_between_bytes"]
    assert lo <= row["send_buffer_bytes"] <= hi
    # the knee at 1024 B adds 2 us (0.7 %) at 2048 B: the run's analysis (lower quartiles,
    # as everywhere) bends the line where the slope stands out, within three grid steps
    assert 1024 <= row["send_buffer_bytes"] <= 8192
    # one analysis: the figures are the summary's (analyse_run), not a fit of the table's own
    a = analyse_run(run).to_dict()
    assert row["send_latency_us"] == a["sizes"][0]["median_us"]
    assert row["send_buffer_bytes"] == min(t["bytes"] for t in a["transitions"])
    assert row["send_bandwidth_MBps"] == a["bandwidth"]["headline_MBps"]
    # 1/r = 500 MB/s is beyond the sweep (64 KiB reaches 31 % of it): the measured peak
    assert a["bandwidth"]["asymptotic_determined"] is False
    assert row["send_bandwidth_MBps"] == pytest.approx(a["bandwidth"]["peak_MBps"])


def test_run_statistics_across_launches(make_run):
    runs = [make_run(synth.hockney(560 * f, 0), [8], count=50, seed=i, launch_id=i)
            for i, f in enumerate([1.0, 1.1, 0.95])]
    rs = run_statistics(runs)
    assert rs["bytes"] == 8 and len(rs["runs"]) == 3
    means = [d["mean"] for d in rs["runs"]]
    assert rs["across_runs"]["mean"] == pytest.approx(np.mean(means))
    assert rs["across_runs"]["stderr"] == pytest.approx(np.std(means, ddof=1) / np.sqrt(3))
    assert all(d["min"] <= d["median"] <= d["max"] for d in rs["runs"])


def test_control_limits_are_percentiles_of_the_samples(make_run):
    run = make_run(synth.hockney(10000, 0.1), [16384, 65536], count=800, seed=3)
    (tab,) = control_limits([run])
    for row, s in zip(tab["sizes"], run.sizes):
        x = np.sort(s.samples_ns) / 1e3              # the recorded samples, us
        assert row["mean_us"] == pytest.approx(x.mean())
        assert (row["lcl_us"], row["ucl_us"]) == pytest.approx((x[1], x[-2]))   # k = floor(800 * 0.00135) = 1
        assert row["outside"] == int(((x < row["lcl_us"]) | (x > row["ucl_us"])).sum())


def _db_record(both_ns, comp_ns, comm_ns, n=20, seed=0):
    from versus.load import SizeRecord
    rng = np.random.default_rng(seed)
    jitter = lambda v: (v * (1 + 0.01 * rng.standard_normal(n))).astype(np.int64)   # noqa: E731
    return SizeRecord(65536, jitter(both_ns), extra={"compute_ns": jitter(comp_ns), "comm_ns": jitter(comm_ns)})


@pytest.mark.parametrize("both, want", [(20e3, 1.0), (30e3, 0.0), (25e3, 0.5), (35e3, -0.5)])
def test_overlap_of_seed_002_from_the_references(both, want):
    from versus.report_studies import overlap, overlap_over
    rec = _db_record(both, 10e3, 20e3)         # sum 10 us, receive 20 us: hidden entirely at 20 us
    v, ci, comp, comm, b = overlap(rec)
    assert v == pytest.approx(want, abs=0.05)
    assert ci[0] <= v <= ci[1] and ci[1] - ci[0] < 0.3
    med, mci, n = overlap_over([rec, _db_record(both, 10e3, 20e3, seed=1), _db_record(both, 10e3, 20e3, seed=2)])
    assert n == 3 and med == pytest.approx(want, abs=0.05) and mci[0] <= med <= mci[1]


def test_seed_answer_rows_carry_one_of_three_verdicts():
    from versus.report_studies import _row
    assert _row("q", "p", "a", "agrees", "why")[3] == "agrees: why"
    with pytest.raises(ValueError, match="not one of agrees"):
        _row("q", "p", "a", "roughly", "why")


def test_a_sweep_cut_at_its_timeout_is_named_and_not_used_in_the_answer(make_run):
    """Seed 004: the two-box sweep's launch has no end record (killed at its timeout): the answer and
    the tables leave it out and say why; the complete single-size trials still answer."""
    from versus.report import Config, pool
    from versus.report_studies import study_section

    def cfg(cid, runs):
        return Config(cid, runs, pool(runs))

    one = [make_run(synth.hockney(300, 0.0), [8], count=50, seed=i, launch_id=i) for i in range(3)]
    two = [make_run(synth.hockney(5000, 0.0), [8], count=50, seed=10 + i, launch_id=i) for i in range(3)]
    cut = make_run(synth.hockney(5000, 0.01), list(range(4, 20000, 400)), count=20, end=False)
    for r in two + [cut]:
        r.record["hosts"] = ["box-a", "box-b"]
    sec = study_section("seed004", [cfg("two-ints", one), cfg("two-ints-two-boxes", two),
                                    cfg("packet-size-two-boxes", [cut])])
    assert cut.status == "incomplete"
    ans = sec["answer"]
    assert any("packet-size-two-boxes: incomplete" in n for n in ans["notes"])
    steps = next(r for r in ans["rows"] if r[0].startswith("Steps"))
    assert steps[2] == "–" and steps[3].startswith("not measured here") and "cut short" in steps[3]
    ratio = next(r for r in ans["rows"] if "20×" in r[0])
    assert ratio[2] != "–"                       # the complete trials still answer
    assert not any("packet-size-two-boxes" in str(row) for t in sec["tables"] for row in t["rows"])
