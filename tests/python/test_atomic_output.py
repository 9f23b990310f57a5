"""Output is written whole or not at all.  On a small tmpfs filled nearly to the brim (mounted
here; skipped where mounting is not permitted, always unmounted): `versus report` ends with exit
2 and one line, the earlier report's files are untouched, and no temporary folder is left; a
campaign ends with exit 2 and one line and its manifest is the previous one, never a cut one."""
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import versus
from versus import campaign as vc
from versus.load import InputError

PKG = str(Path(versus.__file__).resolve().parents[1])
DATA = Path(__file__).resolve().parent / "data"


def versus_cmd(*args, timeout=300):
    env = dict(os.environ, PYTHONPATH=PKG, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return subprocess.run([sys.executable, "-m", "versus", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=env, stdin=subprocess.DEVNULL)


@pytest.fixture
def tmpfs(tmp_path):
    """A tmpfs of 32 MiB at tmp_path/disk (a report is about 10 MB: each of its two pages carries
    the charting library), unmounted at the end whatever happens."""
    where = tmp_path / "disk"
    where.mkdir()
    if not shutil.which("mount") or not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root and mount(8)")
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32m", "tmpfs", str(where)], capture_output=True,
                       text=True)
    if p.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {p.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(disk: Path, leave_kib: int) -> None:
    """Fill the file system of disk until about leave_kib KiB are left."""
    st = os.statvfs(disk)
    free = st.f_bavail * st.f_frsize
    with open(disk / "filler", "ab") as f:
        f.write(b"\0" * max(0, free - leave_kib * 1024))


def digests(d: Path) -> dict:
    return {str(p.relative_to(d)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(d.rglob("*")) if p.is_file()}


def test_report_on_a_full_disk_keeps_the_previous_report(tmpfs):
    out = tmpfs / "report"
    first = versus_cmd("report", DATA / "shm-pingpong.jsonl", "-o", out)
    assert first.returncode == 0, first.stderr
    before = digests(out)
    assert "index.html" in before and "report.tex" in before
    fill(tmpfs, 60)
    # a larger report (two configurations) than the one there: it cannot fit beside it
    p = versus_cmd("report", DATA / "shm-pingpong.jsonl", DATA / "tcp-staircase.jsonl", "-o", out)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    assert "No space left on device" in lines[0] and "previous report there is left as it was" in lines[0]
    assert digests(out) == before, "the earlier report's files are untouched"
    assert sorted(os.listdir(out)) == sorted(before), "no temporary folder left behind"
    # with room again the same command renders, and replaces the report whole
    (tmpfs / "filler").unlink()
    p = versus_cmd("report", DATA / "shm-pingpong.jsonl", DATA / "tcp-staircase.jsonl", "-o", out)
    assert p.returncode == 0, p.stderr
    assert "tcp" in (out / "index.html").read_text(encoding="utf-8")
    assert not [n for n in os.listdir(out) if n.startswith(".")]


def test_report_keeps_files_it_does_not_write(tmp_path):
    out = tmp_path / "report"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n", encoding="utf-8")
    p = versus_cmd("report", DATA / "shm-pingpong.jsonl", "-o", out)
    assert p.returncode == 0, p.stderr
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine\n"
    assert (out / "index.html").exists() and not [n for n in os.listdir(out) if n.startswith(".")]


def test_campaign_on_a_full_disk_keeps_the_previous_manifest(tmpfs, tmp_path):
    try:
        runner = vc.find_runner()
        if vc.probe_runner(runner).modules.get("shm") != "yes":
            pytest.skip("module shm does not load here")
    except InputError as ex:
        pytest.skip(f"no runner: {ex}")
    cfg = tmp_path / "c.toml"
    body = 'launches = 1\n[[run]]\nid = "a"\ntransport = "shm"\nsizes = "8"\niterations = {n}\nwarmup = 1\n'
    cfg.write_text(body.format(n=5), encoding="utf-8")
    results = tmpfs / "r"
    p = versus_cmd("campaign", cfg, "--results", results, "--runner", runner)
    assert p.returncode == 0, p.stderr
    manifest = (results / "campaign.json").read_bytes()
    assert json.loads(manifest)["runs"][0]["status"] == "ok"
    fill(tmpfs, 0)
    cfg.write_text(body.format(n=6), encoding="utf-8")     # a change: the run would be measured again
    p = versus_cmd("campaign", cfg, "--results", results, "--runner", runner)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr and "No space left on device" in lines[0], p.stderr
    assert (results / "campaign.json").read_bytes() == manifest
    assert sorted(os.listdir(results)) == ["a.jsonl", "campaign.json"], "no lock or temporary file left"


def test_manifest_write_leaves_no_temporary(tmp_path, monkeypatch):
    camp = vc.Campaign("c.toml", "t", None, [], [])
    info = vc.RunnerInfo("versus-run", {}, [])
    vc._write_manifest(tmp_path, camp, info, [])
    first = (tmp_path / "campaign.json").read_text(encoding="utf-8")

    def no_room(*a, **k):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "fsync", no_room)
    with pytest.raises(InputError, match="No space left on device"):
        vc._write_manifest(tmp_path, vc.Campaign("c.toml", "changed", None, [], []), info, [])
    assert (tmp_path / "campaign.json").read_text(encoding="utf-8") == first
    assert os.listdir(tmp_path) == ["campaign.json"]
