"""Records no run of versus-run can write are refused with the file and line named (exit 2), and what
a run does write (lines tagged with its run_id, every pair at once, a file of an earlier version) is
read; the cases of tests/corpus/cli.cases, and the ones a corpus line cannot show."""
import json

import pytest

import synth
from versus.cli import main
from versus.load import InputError, load_file


def records(pattern="pingpong", variant=None, sizes=(8, 64, 512), tag=True, **run):
    lines = synth.make_lines(synth.hockney(1000, 0.1), list(sizes), count=20, seed=1, pattern=pattern,
                             variant=variant)
    recs = [json.loads(x) for x in lines]
    recs[0].update(run)
    for k, r in enumerate(recs[1:-1]):
        r["position"] = k
    if tag:
        for r in recs[1:]:
            r["run_id"] = recs[0]["run_id"]
    return recs


def write(tmp_path, recs, name="r.jsonl"):
    p = tmp_path / name
    p.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    return p


def refused(tmp_path, recs, words, line):
    p = write(tmp_path, recs)
    with pytest.raises(InputError) as ex:
        load_file(p)
    assert str(ex.value).startswith(f"{p}:{line}: ") and words in str(ex.value), str(ex.value)


def test_what_a_run_writes_is_read(tmp_path):
    for recs in (records(), records(tag=False), records("put", "bandwidth", pattern_params={"window": 4096}),
                 records("atomic", "cswap", sizes=(8,)), records("stream", pattern_params={"window": 1})):
        run = load_file(write(tmp_path, recs))[0]
        assert len(run.sizes) == len(recs) - 2 and run.status == "ok"


def test_patterns_variants_and_windows_no_run_has(tmp_path):
    refused(tmp_path, records(pattern_params={"window": 64}), "only stream, bistream", 1)
    refused(tmp_path, records("get", "bandwidth"), "without its window", 1)
    refused(tmp_path, records("bistream", pattern_params={"window": 4097}), "at most 4096", 1)
    refused(tmp_path, records("overhead", "windowed"), "has no variant 'windowed'", 1)
    recs = records()
    del recs[0]["pattern"]
    refused(tmp_path, recs, "no pattern", 1)
    refused(tmp_path, records("atomic", "fadd", sizes=(8, 4)), "a 4 B atomic", 3)


def test_samples_and_pairs_no_run_has(tmp_path):
    recs = records()
    recs[2]["samples_ns"][5] = 0
    refused(tmp_path, recs, "1 of 20 samples 0 ns at 64 B", 3)
    recs = records()
    recs[1]["samples_ns"] = [2 ** 59] * 20        # each fits in 64 bits, the sum does not
    refused(tmp_path, recs, "add up to more than 2^63 ns", 2)
    recs = records()
    recs[1]["pair"] = {"ranks": [0, 0]}
    refused(tmp_path, recs, "rank 0 twice", 2)


def every_pair_at_once(tmp_path):
    """Four ranks, pairs 0-2 and 1-3 at once: a size record per pair and visit, then an aggregate."""
    recs = records(sizes=(8,), ranks=4, hosts=["n1"] * 4)
    run, size, end = recs
    out = [run]
    for pos, b in enumerate((8, 64)):
        for pair in ([0, 2], [1, 3]):
            out.append(dict(size, bytes=b, position=pos, pair={"ranks": pair}))
        out.append({"record": "aggregate", "run_id": run["run_id"], "bytes": b, "pairs": 2, "position": pos})
    end["sizes_completed"] = 2                    # visits, not pairs
    return out + [end]


def test_every_pair_at_once_counts_its_visits(tmp_path):
    recs = every_pair_at_once(tmp_path)
    assert [r.label.split()[-1] for r in load_file(write(tmp_path, recs))] == ["0-2", "1-3"]
    recs[-1]["sizes_completed"] = 4
    refused(tmp_path, recs, "counts 4 size records but the file holds 2", len(recs))
    recs = every_pair_at_once(tmp_path)
    recs[4]["pair"] = {"ranks": [1, 4]}
    refused(tmp_path, recs, "rank 4, and the run had 4 ranks", 5)


def test_lines_of_another_run_or_out_of_place(tmp_path):
    recs = records()
    recs[-1]["run_id"] = "another"
    refused(tmp_path, recs, "a line of another run", 5)
    recs = records()
    del recs[2]["run_id"]                         # a line of an older file put in
    refused(tmp_path, recs, "lacks the run_id", 3)
    recs = records(tag=False)
    del recs[-1]                                  # a killed run: no end record, the gap shows
    del recs[2]
    refused(tmp_path, recs, "at position 2 where the visit after position 0 belongs", 3)
    recs = records(tag=False)
    recs[-1]["sizes_completed"] = 2
    refused(tmp_path, recs, "counts 2 size records but the file holds 3 of this run: lines were added", 5)


def test_compare_counts_a_launch_once(tmp_path, capsys):
    a = write(tmp_path, records(), "a.jsonl")
    copy = write(tmp_path, records(), "copy.jsonl")
    b = write(tmp_path, records(run_id="other"), "b.jsonl")
    assert main(["compare", f"{a},{copy}", str(b)]) == 2
    assert "the same launch" in capsys.readouterr().err
    assert main(["compare", str(b), f"{a},{a}"]) == 2
    assert "given twice" in capsys.readouterr().err
    assert main(["compare", str(a), str(b)]) == 0
