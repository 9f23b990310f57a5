"""The runner dies with its campaign.  A campaign killed with SIGKILL (no handler runs) leaves no
process of its run behind: the runner gets SIGTERM from the kernel (a parent death signal) and
ends its ranks, under the local launcher and under mpirun.  SIGTERM to the campaign still stops
the run's whole group and records it as interrupted.  A campaign started beside a runner still
writing into its results directory refuses, naming it, instead of measuring beside it.

Processes are found by the results directory in their command line (the runner's --out, which
mpirun passes on to its ranks) and by the sessions those runners lead; whatever a test leaves is
killed in its finally, and only those."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import versus
from versus import campaign as vc
from versus.load import InputError

PKG = str(Path(versus.__file__).resolve().parents[1])
LONG = """launches = 1
timeout = 300
[[run]]
id = "long"
transport = "{transport}"
sizes = "4M"
iterations_large = 1000000
warmup_large = 1
"""


def runner_or_skip(transport):
    if not os.path.isdir("/proc"):
        pytest.skip("needs /proc to find the processes")
    try:
        runner = vc.find_runner()
        info = vc.probe_runner(runner)
    except InputError as ex:
        pytest.skip(f"no runner: {ex}")
    if info.modules.get(transport) != "yes":
        pytest.skip(f"module {transport} does not load here")
    return runner


def env():
    return dict(os.environ, PYTHONPATH=PKG, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def stat(pid):
    """(state, session) of a process, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return fields[0], int(fields[3])


def marked(results: Path, exclude=()):
    """Live processes with a path inside results on their command line."""
    mark = (str(results) + "/").encode()
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) in exclude:
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        st = stat(d)
        if st and st[0] != "Z" and any(a.startswith(mark) for a in argv):
            out.append(int(d))
    return out


def in_sessions(sids):
    out = []
    for d in os.listdir("/proc"):
        st = stat(d) if d.isdigit() else None
        if st and st[0] != "Z" and st[1] in sids:
            out.append(int(d))
    return out


def led_sessions(pids):
    """The sessions led by these processes (a campaign starts each runner as a session leader);
    never this test's own session."""
    mine = {os.getsid(0)}
    return {p for p in pids if (stat(p) or (None, None))[1] == p} - mine


def kill_all(pids):
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass


def wait_for(pred, timeout):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        v = pred()
        if v:
            return v
        time.sleep(0.02)
    return pred()


def start_campaign(tmp_path, transport):
    cfg, results = tmp_path / "c.toml", (tmp_path / "r").resolve()
    cfg.write_text(LONG.format(transport=transport), encoding="utf-8")
    p = subprocess.Popen([sys.executable, "-m", "versus", "campaign", str(cfg), "--results", str(results),
                          "--runner", vc.find_runner()], env=env(), stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return p, results


@pytest.mark.parametrize("transport", ["shm", "openmpi"])
def test_sigkill_of_the_campaign_leaves_no_runner(tmp_path, transport):
    runner_or_skip(transport)
    p, results = start_campaign(tmp_path, transport)
    sids = set()
    try:
        # the run is under way: the runner and both ranks (or mpirun and both ranks)
        got = wait_for(lambda: len(marked(results, {p.pid})) >= 3 and (results / "long.jsonl").exists(), 30)
        assert got, f"the run did not start: {p.stderr.read() if p.poll() is not None else ''}"
        time.sleep(0.3)
        sids = led_sessions(marked(results, {p.pid}))
        assert sids, "the runner leads a session of its own"
        before = len(set(marked(results, {p.pid})) | set(in_sessions(sids)))
        t0 = time.monotonic()
        p.kill()
        p.wait()
        gone = wait_for(lambda: not marked(results, {p.pid}) and not in_sessions(sids), 10)
        took = time.monotonic() - t0
        left = set(marked(results, {p.pid})) | set(in_sessions(sids))
        assert gone, f"{len(left)} of {before} processes still run {took:.1f} s after SIGKILL of the campaign"
        print(f"{transport}: {before} processes, all gone {took:.2f} s after SIGKILL of the campaign")
        # the runner answered the signal as it answers Ctrl-C: its end record says so (versus-run's own
        # launcher); mpirun may kill its ranks before they write it, and then what was written stays
        lines = (results / "long.jsonl").read_text(encoding="utf-8").splitlines()
        if transport == "shm":
            assert json.loads(lines[-1]).get("status") == "interrupted", lines[-1]
        else:
            assert all(json.loads(ln).get("record") in ("run", "size", "end") for ln in lines), lines[-1][:200]
            assert json.loads(lines[-1]).get("status") in (None, "interrupted", "error"), lines[-1][:200]
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        kill_all(set(marked(results, {p.pid})) | set(in_sessions(sids)))
        p.stderr.close()


def test_sigterm_of_the_campaign_still_stops_the_group(tmp_path):
    runner_or_skip("shm")
    p, results = start_campaign(tmp_path, "shm")
    sids = set()
    try:
        assert wait_for(lambda: len(marked(results, {p.pid})) >= 3, 30), "the run did not start"
        time.sleep(0.3)
        sids = led_sessions(marked(results, {p.pid}))
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=30)
        assert p.returncode == 128 + signal.SIGTERM, err
        assert "interrupted by signal 15" in err
        assert not marked(results, {p.pid}) and not in_sessions(sids)
        man = json.loads((results / "campaign.json").read_text(encoding="utf-8"))
        assert man["runs"][0]["status"] == "interrupted"
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        kill_all(set(marked(results, {p.pid})) | set(in_sessions(sids)))


def test_a_runner_still_writing_into_the_results_is_named_not_measured_beside(tmp_path):
    runner = runner_or_skip("shm")
    results = (tmp_path / "r").resolve()
    results.mkdir()
    stray = subprocess.Popen([runner, "-t", "shm", "--launch", "local", "-n", "2", "-s", "4M",
                              "--iterations-large", "1000000", "--quiet", "--out", str(results / "long.jsonl")],
                             env=env(), start_new_session=True, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: len(marked(results)) >= 3, 30), "the stray run did not start"
        cfg = tmp_path / "c.toml"
        cfg.write_text(LONG.format(transport="shm"), encoding="utf-8")
        p = subprocess.run([sys.executable, "-m", "versus", "campaign", str(cfg), "--results", str(results),
                            "--runner", runner], env=env(), capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL)
        assert p.returncode == 2, p.stderr
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
        assert "3 processes of an earlier campaign" in lines[0] and "still measure into it" in lines[0]
        assert f"kill -TERM -- -{stray.pid}" in lines[0]
        assert not (results / "campaign.json").exists() and not (results / ".campaign.lock").exists()
        assert stray.poll() is None, "the campaign leaves the stray run alone"
    finally:
        try:
            os.killpg(stray.pid, signal.SIGKILL)
        except OSError:
            pass
        stray.wait()
        kill_all(marked(results))


def test_the_lock_is_never_seen_empty(tmp_path):
    class Say:
        def write(self, s):
            pass
    with vc.ResultsLock(tmp_path, Say()) as lock:
        assert lock.path.read_text(encoding="utf-8") == f"{os.getpid()}\n"
        assert sorted(p.name for p in tmp_path.iterdir()) == [".campaign.lock"]   # no temporary left
        with pytest.raises(InputError, match="another campaign"):
            vc.ResultsLock(tmp_path, Say()).__enter__()
    assert not any(tmp_path.iterdir())
