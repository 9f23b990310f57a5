"""A peak that the largest sizes do not sustain (a token-bucket link lets medium messages through at
line rate) is called a burst, and the summary does not tell the reader to quote it."""
import synth
from versus.analysis import analyse_run, summary_document
from versus.console import format_summary
from versus.load import load_file

SIZES = [1 << k for k in range(3, 23)]


def bucket(n):
    """One-way x 2: at line rate (2 ns/B) up to the bucket's 64 KiB, at the link's 80 ns/B beyond."""
    fast = 2.0 * min(n, 65536)
    slow = 80.0 * max(0, n - 65536)
    return 2 * (5000 + fast + slow)


def straight(n):
    return 2 * (5000 + 2.0 * n)


def write(tmp_path, model, name):
    p = tmp_path / name
    p.write_text("\n".join(synth.make_lines(model, SIZES, count=40, seed=2, rel_noise=0.01)) + "\n")
    return p


def analyse(tmp_path, model, name):
    return analyse_run(load_file(write(tmp_path, model, name))[0])


def test_burst_peak_is_not_quoted(tmp_path):
    a = analyse(tmp_path, bucket, "tbf.jsonl")
    bw = a.bandwidth()
    assert bw["peak_is_burst"] is True and bw["peak_bytes"] <= 131072
    assert bw["largest_MBps"] < 0.2 * bw["peak_MBps"]
    text = format_summary(summary_document(load_file(write(tmp_path, bucket, "tbf2.jsonl"))))
    assert "quote the peak" not in text and "burst" in text


def test_sustained_peak_is_not_a_burst(tmp_path):
    bw = analyse(tmp_path, straight, "flat.jsonl").bandwidth()
    assert bw["peak_is_burst"] is False
