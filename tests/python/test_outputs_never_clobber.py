"""An output never replaces what was not named as new output: a device, a FIFO or a directory at
the path is refused, never renamed over; so is the command's own input; an existing file is
replaced only with --overwrite (or, for --junit, when it is a JUnit report itself).  Every refusal
exits 2 with a message and leaves what was there as it was.  The device nodes and FIFOs are made in
the test's own directory."""
import os
import shutil
import stat

import pytest
import synth

from versus.cli import main

HERE = os.path.dirname(os.path.abspath(__file__))
OSU = os.path.join(HERE, "data", "import", "osu_latency-7.4.txt")
SIZES = [8, 1024, 65536]


def run(argv, capsys):
    rc = main(argv)
    return rc, capsys.readouterr().err


def results(tmp_path, tag, n=3):
    out = []
    for k in range(n):
        p = tmp_path / f"{tag}{k}.jsonl"
        synth.write_run(p, synth.hockney(2000.0, 0.1), SIZES, count=100, seed=k, rel_noise=0.01, outlier_frac=0,
                        launch_id=k, run_id=f"{tag}-{k}")
        out.append(str(p))
    return out


def char_device(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    dev = tmp_path / "full"
    os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 7))   # what /dev/full is
    return dev


def still(path, test):
    assert test(os.lstat(path).st_mode), f"{path} is no longer what it was"


def device_refused(tmp_path, capsys, argv, option):
    """argv with `option DEVICE --overwrite` appended, a character device made here: exit 2, the
    device left a device."""
    dev = char_device(tmp_path)
    rc, err = run([*argv, option, str(dev), "--overwrite"], capsys)
    assert rc == 2 and "a character device" in err, err
    still(dev, stat.S_ISCHR)


def saved(tmp_path, capsys, launches, name):
    b = tmp_path / name
    assert run(["baseline", "save", *launches, "-o", str(b)], capsys)[0] == 0
    return b


@pytest.fixture
def osu(tmp_path):
    p = tmp_path / "osu.txt"
    shutil.copy(OSU, p)
    return p


def test_import_refuses_a_device_a_fifo_and_a_directory(tmp_path, osu, capsys):
    dev = char_device(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    d = tmp_path / "dir"
    d.mkdir()
    for target, kind, test in ((dev, "a character device", stat.S_ISCHR), (fifo, "a FIFO", stat.S_ISFIFO),
                               (d, "a directory", stat.S_ISDIR)):
        for extra in ([], ["--overwrite"]):
            rc, err = run(["import", str(osu), "-o", str(target), *extra], capsys)
            assert rc == 2 and kind in err and "not a regular file" in err, (target, extra, err)
            still(target, test)


def test_import_never_replaces_its_own_input(osu, capsys):
    before = osu.read_bytes()
    for extra in ([], ["--overwrite"]):
        rc, err = run(["import", str(osu), "-o", str(osu), *extra], capsys)
        assert rc == 2 and "input" in err, err
        assert osu.read_bytes() == before


def test_import_replaces_an_existing_file_only_with_overwrite(tmp_path, osu, capsys):
    (old,) = results(tmp_path, "old", 1)
    before = open(old, "rb").read()
    rc, err = run(["import", str(osu), "-o", old], capsys)
    assert rc == 2 and "--overwrite" in err and open(old, "rb").read() == before, err
    rc, err = run(["import", str(osu), "-o", old, "--overwrite"], capsys)
    assert rc == 0 and open(old, "rb").read() != before
    assert run(["summary", old], capsys)[0] == 0


def test_import_through_a_symlink_writes_the_file_it_names_and_refuses_a_dangling_one(tmp_path, osu, capsys):
    target = tmp_path / "real.jsonl"
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    rc, err = run(["import", str(osu), "-o", str(link)], capsys)
    assert rc == 2 and "symbolic link to nothing" in err and not target.exists(), err
    target.write_text("")
    rc, err = run(["import", str(osu), "-o", str(link)], capsys)
    assert rc == 0, err
    assert link.is_symlink() and target.stat().st_size > 0


def test_baseline_save_replaces_a_baseline_only_with_overwrite_and_never_a_device(tmp_path, capsys):
    launches = results(tmp_path, "base")
    b = saved(tmp_path, capsys, launches, "b.json")
    before = b.read_bytes()
    rc, err = run(["baseline", "save", *launches, "-o", str(b)], capsys)
    assert rc == 2 and "--overwrite" in err and b.read_bytes() == before, err
    assert run(["baseline", "save", *launches, "-o", str(b), "--overwrite"], capsys)[0] == 0
    device_refused(tmp_path, capsys, ["baseline", "save", *launches], "-o")


def test_check_junit_replaces_a_junit_report_but_not_another_file(tmp_path, capsys):
    launches = results(tmp_path, "base")
    b = saved(tmp_path, capsys, launches, "b.json")
    other = saved(tmp_path, capsys, launches, "other.json")
    before = other.read_bytes()
    new = results(tmp_path, "new")
    rc, err = run(["check", *new, "--baseline", str(b), "--junit", str(other)], capsys)
    assert rc == 2 and "--overwrite" in err and other.read_bytes() == before, err
    j = tmp_path / "gate.xml"
    for night in range(2):     # a nightly gate writes one name each night
        rc, err = run(["check", *new, "--baseline", str(b), "--junit", str(j)], capsys)
        assert rc in (0, 1) and j.read_bytes().startswith(b"<?xml"), (night, err)
    device_refused(tmp_path, capsys, ["check", *new, "--baseline", str(b)], "--junit")


def test_baseline_export_never_reads_a_device_at_its_output(tmp_path, capsys):
    b = saved(tmp_path, capsys, results(tmp_path, "base"), "b.json")
    zero = tmp_path / "zero"
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    os.mknod(zero, 0o666 | stat.S_IFCHR, os.makedev(1, 5))   # what /dev/zero is: endless
    rc, err = run(["baseline", "export", str(b), "--reframe", "sys:part", "-o", str(zero)], capsys)
    assert rc == 2 and "a character device" in err, err
    still(zero, stat.S_ISCHR)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    rc, err = run(["baseline", "export", str(b), "--reframe", "sys:part", "-o", str(fifo)], capsys)
    assert rc == 2 and "a FIFO" in err, err
    still(fifo, stat.S_ISFIFO)
