"""OSU tables read with the units their headers name: ms and ns latencies, megabit rates; what
versus cannot interpret (an unknown unit, a second table, a non-finite, cut or negative figure, a
fractional size) is refused with the file and line, never read as something else."""
import pytest

from versus.importers import import_text
from versus.load import InputError

LAT = "# OSU MPI Latency Test v7.1\n# Size          Latency ({u})\n0                       {a}\n8                       {b}\n"
BW = "# OSU MPI Bandwidth Test v7.1\n# Size      Bandwidth ({u})\n8                       {a}\n1024                    {b}\n"


@pytest.mark.parametrize("unit,factor", [("us", 1e3), ("ms", 1e6), ("ns", 1.0), ("s", 1e9)])
def test_latency_units(unit, factor):
    (imp,) = import_text(LAT.format(u=unit, a="1.50", b="2.25"), "osu.txt")
    assert [r["one_way_ns"] for r in imp.rows] == pytest.approx([1.5 * factor, 2.25 * factor])


@pytest.mark.parametrize("unit,factor", [("MB/s", 1.0), ("Mb/s", 0.125), ("GB/s", 1e3), ("MiB/s", 1.048576)])
def test_bandwidth_units(unit, factor):
    (imp,) = import_text(BW.format(u=unit, a="800.00", b="1600.00"), "osu.txt")
    assert [r["bandwidth_MBps"] for r in imp.rows] == pytest.approx([800 * factor, 1600 * factor])


@pytest.mark.parametrize("text,words", [
    (LAT.format(u="furlongs", a="1.0", b="2.0"), "unit 'furlongs'"),
    (LAT.format(u="us", a="0.", b="2.0"), "above 0"),
    (LAT.format(u="us", a="inf", b="2.0"), "not a number"),
    (LAT.format(u="us", a="1e999", b="2.0"), "out of range"),
    (LAT.format(u="us", a="-1.0", b="2.0"), "above 0"),
    (LAT.format(u="us", a="1.0", b="2.0").replace("\n8 ", "\n8.5 "), "not a message size"),
    (LAT.format(u="us", a="1.0", b="2.0").replace("\n8 ", "\n-8 "), "not a message size"),
    (LAT.format(u="us", a="1.0", b="2.0") + LAT.format(u="us", a="1.0", b="2.0"), "second OSU table"),
])
def test_what_cannot_be_read_is_refused_with_its_line(text, words):
    with pytest.raises(InputError) as e:
        import_text(text, "osu.txt")
    assert words in str(e.value) and "osu.txt:" in str(e.value)


def test_the_format_guess_is_linear_in_the_text():
    import time
    from versus.importers import guess_format
    for n in (30, 3000):
        t0 = time.monotonic()
        with pytest.raises(InputError):
            guess_format("1 2 3 " * n + "x", "x.txt")     # took 53 s at 98 bytes with one nested pattern
        assert time.monotonic() - t0 < 2.0


def test_pipes_devices_and_folders_are_refused_not_waited_on(tmp_path):
    import os
    from versus.importers import import_file
    from versus.load import load_file
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for reader in (load_file, import_file):
        for p, words in ((fifo, "not a regular file"), ("/dev/zero", "not a regular file"),
                         (tmp_path, "a directory")):
            with pytest.raises(InputError) as e:
                reader(str(p))
            assert words in str(e.value)


def test_reading_an_input_reserves_no_more_than_it_holds(tmp_path):
    """read_input bounds what it reads without reserving the bound: under a 1 GiB address-space limit a
    small file loads (a read(8 GiB + 1) reserved 8 GiB at once, and the corpus's runs were killed)."""
    import subprocess
    import sys
    import synth
    p = synth.write_run(tmp_path / "r.jsonl", synth.hockney(1000, 0.1), [8, 64], count=10)
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)); "
            "from versus.load import load_file; from versus.importers import import_file; "
            f"print(len(load_file({str(p)!r})[0].sizes))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "2", r.stderr[-500:]
