"""A seed-study config runs end to end at reduced repetitions: every run
measured (none failed or timed out), the report renders the study's own
section with its tables filled, and the LaTeX compiles.

A study with two-box runs (nodes = 2) is given --lab[=UP,ARGS]: the test brings up the two boxes of
`versus lab` (with those `versus lab up` arguments), runs the campaign with --lab, and takes the
lab down again, also when it fails.  Where this machine cannot make network namespaces (not
root), the two-box runs must be skipped with the reason and their tables (ids with "boxes") are
not asked for.

Then each study's own statistic and claim against what its configuration produced (STUDY_CHECKS): the
section opens with its answer table (seedNNN-answer: the study's questions, its answer, versus's, a
verdict), and, per study, what makes the answer mean something: seed 000's send and receive are timed
apart and differ; seed 002's overlap is in the report and equals the one recomputed here from the raw
references, for both progress modes; seed 003 has odd sizes beside multiples of 8 and, on the lab, its
inter-node runs; seed 004's one box went through shared memory; no sweep of 001 or 004 was cut short.

usage: test_seed_study.py CONFIG.toml [--lab[=UP,ARGS]] TABLE_ID..."""
import glob
import html as htmllib
import json
import os
import re
import sys

import numpy as np

from rtest import check, fail, log, pdflatex, pdftotext, tmpdir, versus

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from vstest import BUILT, SKIP, netns_missing  # noqa: E402

config, tables = sys.argv[1], sys.argv[2:]
lab_up, lab_asked = None, False
if tables and tables[0].startswith("--lab"):
    lab_asked = True
    lab_up = [a for a in tables.pop(0).partition("=")[2].split(",") if a]
    why = netns_missing()
    if why:
        log(f"{why}: the two-box runs must be skipped")
        lab_up = None
        tables = [t for t in tables if "boxes" not in t]
work = tmpdir()
results, report = os.path.join(work, "results"), os.path.join(work, "report")
try:
    if lab_up is not None:
        versus(["lab", "up", *lab_up], timeout=60)
    p = versus(["campaign", config, "--results", results, "--report", report] + (["--lab"] if lab_up is not None else []),
               timeout=900, env={"VERSUS_CAMPAIGN_SCALE": os.environ.get("VERSUS_CAMPAIGN_SCALE", "0.05")},
               check_rc=None)
finally:
    if lab_up is not None:
        versus(["lab", "down"], timeout=60, check_rc=None)
man = json.load(open(os.path.join(results, "campaign.json"), encoding="utf-8"))
for e in man["runs"]:
    log(f"{e['id']}: {e['status']} {e.get('note') or ''}")
bad = [e for e in man["runs"] if e["status"] in ("failed", "timeout")]
check(not bad, "no run failed or timed out: "
      + "; ".join(f"{e['id']} {e['status']}: {(e.get('stderr_tail') or e.get('note') or '')[-300:]}" for e in bad))
if not any(e["status"] == "ok" for e in man["runs"]):
    notes = "; ".join(f"{e['id']}: {e.get('note')}" for e in man["runs"])
    print(f"SKIP: nothing of this study can run here (built: {', '.join(BUILT)}): {notes}", flush=True)
    sys.exit(SKIP)
check(p.returncode == 0, "versus campaign exits 0")
unmet = [e for e in man["runs"] if e["status"] == "skipped" and (e.get("note") or "").startswith("needs 2 nodes")]
check(all(e["status"] == "ok" for e in man["runs"] if e not in unmet),
      "every run of the study was measured: " + ", ".join(f"{e['id']}={e['status']}" for e in man["runs"]))
if lab_asked:
    check(not unmet if lab_up is not None else bool(unmet),
          f"two-box runs: {'all measured on the lab' if lab_up is not None else 'skipped, saying why'} "
          f"({len(unmet)} skipped)")
else:
    check(not unmet, "no run of this study needs more nodes than there are")

html = open(os.path.join(report, "index.html"), encoding="utf-8").read()
check(f'<h2 id="study">Seed {man["study"][4:]}' in html, f"the report has the {man['study']} section")
numbers = 0
for tid in tables:
    m = re.search(rf'<table id="{re.escape(tid)}" class="data">(.*?)</table>', html, re.S)
    if not m:
        fail(f"study table {tid} is missing")
    body = m.group(1).split("<tbody>")[1]
    n = body.count("<tr>")
    cells = re.findall(r'<td class="num">([^<]*)</td>', body)
    check(n >= 1, f"study table {tid} has {n} rows")
    numbers += sum(c not in ("–", "") for c in cells)
check(numbers > 0, f"the study tables hold {numbers} figures")


def table_rows(tid):
    """The rows of a table of the report, each a list of its cells' text."""
    m = re.search(rf'<table id="{re.escape(tid)}" class="data">(.*?)</table>', html, re.S)
    if not m:
        fail(f"table {tid} is missing")
    body = m.group(1).split("<tbody>")[1]
    return [[htmllib.unescape(re.sub("<[^>]+>", "", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)]
            for r in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


def records(run_id):
    """Per launch of a configuration (its files RUN_ID[.VARIANT].L<n>.jsonl): (run record, size records, end)."""
    out = []
    for f in sorted(glob.glob(os.path.join(results, f"{run_id}.L*.jsonl"))):
        lines = [json.loads(ln) for ln in open(f, encoding="utf-8") if ln.strip()]
        run = next((x for x in lines if x.get("record") == "run"), {})
        end = next((x for x in lines if x.get("record") == "end"), None)
        out.append((run, [x for x in lines if x.get("record") == "size"], end))
    return out


measured = {e["id"] for e in man["runs"] if e["status"] == "ok"}


def config_ids(prefix=""):
    """The configuration ids (a run's id without its launch suffix) measured, starting with prefix."""
    return sorted({re.sub(r"\.L\d+$", "", i) for i in measured if i.startswith(prefix)})


def sweep_complete(run_id):
    """Every launch of a sweep reached the last size of its schedule and ended ok (not cut at a timeout)."""
    for run, sizes, end in records(run_id):
        last = max(run.get("schedule", {}).get("sizes") or [0])
        got = max((x["bytes"] for x in sizes), default=None)
        check(end is not None and end.get("status") == "ok" and got == last,
              f"{run_id} launch {run.get('launch_id')}: ended {end and end.get('status')}, reached {got} of {last} B")


def median(v):
    return float(np.median(np.asarray(v, dtype=np.float64)))


# the answer first: the section's first table is the answer, every row with a verdict of the three kinds
sec = html[html.index('<h2 id="study">'):]
first = re.search(r'<table id="([^"]+)"', sec)
check(first and first.group(1) == f"{man['study']}-answer", f"the section opens with {man['study']}-answer "
      f"(first table: {first and first.group(1)})")
answer = table_rows(f"{man['study']}-answer")
check(len(answer) >= 3 and all(len(r) == 4 for r in answer), f"the answer has {len(answer)} questions of 4 cells")
check(all(r[3].split(":")[0] in ("agrees", "differs", "not measured here") and len(r[3].split(":", 1)[1]) > 5
          for r in answer), "every verdict is agrees / differs / not measured here, with why: "
      + "; ".join(r[3][:40] for r in answer))
measured_rows = [r for r in answer if r[2] not in ("–", "")]
log("answer: " + " || ".join(f"{r[0][:50]} -> {r[2][:70]} ({r[3].split(':')[0]})" for r in answer))


def answered(words):
    """The answer row whose question holds all of words, with versus's answer given."""
    rows = [r for r in answer if all(w in r[0] for w in words)]
    check(rows and all(r[2] not in ("–", "") for r in rows), f"the question '{' '.join(words)}' has versus's answer")
    return rows


lab_ran = lab_asked and lab_up is not None
study = man["study"]
if study == "seed000":
    for cid in config_ids("openmpi"):
        for run, sizes, _ in records(cid):
            check(run.get("pattern") == "overhead" and all("send_ns" in x and "recv_ns" in x for x in sizes),
                  f"{cid}: the send and the receive are timed apart (pattern {run.get('pattern')})")
            s0 = min(sizes, key=lambda x: x["bytes"])
            snd, rcv = median(s0["send_ns"]), median(s0["recv_ns"])
            check(abs(rcv - snd) > 0.05 * max(snd, rcv), f"{cid}: receive {rcv:.0f} ns and send {snd:.0f} ns differ "
                  f"at {s0['bytes']} B")
    rows = {r[0]: r[1:] for r in table_rows("seed000")}
    check(rows["Send latency (µs)"] != rows["Receive latency (µs)"],
          f"the study table's send and receive rows differ: {rows['Send latency (µs)']} / {rows['Receive latency (µs)']}")
    answered(["receive slower", "blocking"])
elif study == "seed001":
    for cid in config_ids("staircase"):
        sweep_complete(cid)
    answered(["one int, same box"])
    if lab_ran:
        planned = sum(e["id"].startswith("one-int-two-boxes.") for e in man["runs"])
        got = sum(1 for _, sizes, end in records("one-int-two-boxes") if sizes and end and end.get("status") == "ok")
        check(got == planned >= 3, f"every two-box launch of one int measured: {got} of {planned} (10, or 3 reduced)")
        answered(["one int, two boxes"])
        answered(["longer", "between boxes"])
        answered(["one more int"])
elif study == "seed002":
    over = table_rows("seed002-overlap")
    modes = {(r[0], r[1]) for r in over}
    check({m for _, m in modes} >= {"none", "poll=1024"}, f"the overlap table shows both progress modes: {modes}")
    for cid in config_ids():
        for run, sizes, _ in records(cid)[:1]:
            lib = run["transport"]["name"]
            pp = run.get("pattern_params") or {}
            mode = "none" if pp.get("progress", "none") == "none" else f"poll={pp.get('poll_every')}"
            check(all("compute_ns" in x and "comm_ns" in x for x in sizes), f"{cid}: references recorded")
    # the overlap of the largest size, recomputed from the pooled raw series of every launch
    for (lib, mode) in modes:
        cid = next(c for c in config_ids() if c.startswith(lib) and (("poll" in c) == (mode != "none")))
        pooled = {}
        for _, sizes, _ in records(cid):
            for x in sizes:
                for k in ("samples_ns", "compute_ns", "comm_ns"):
                    pooled.setdefault(x["bytes"], {}).setdefault(k, []).extend(x[k])
        big = max(pooled)
        d = {k: median(v) for k, v in pooled[big].items()}
        want = (d["compute_ns"] + d["comm_ns"] - d["samples_ns"]) / min(d["compute_ns"], d["comm_ns"])
        row = next((r for r in over if r[0] == lib and r[1] == mode and r[2] in (f"{big // 1024} KiB", f"{big // 1048576} MiB")), None)
        check(row is not None, f"the overlap table has {lib} {mode} at {big} B")
        got = float(row[6].split(" [")[0].replace("\u202f", "").replace(" ", ""))
        check(abs(got - want) <= 0.01 * max(1.0, abs(want)), f"{lib} {mode} at {big} B: overlap {got} in the report, "
              f"{want:.4f} from the raw series")
    answered(["overlap"])
    answered(["progress without library calls"])
elif study == "seed003":
    for cid in config_ids("rendezvous"):
        for _, sizes, _ in records(cid):
            have = {x["bytes"] for x in sizes}
            odd = [b for b in have if b % 2]
            check(odd and all((b - 1 if (b - 1) % 8 == 0 else b + 1) in have for b in odd),
                  f"{cid}: {len(odd)} odd sizes, each beside its multiple of 8")
    answered(["odd sizes"])
    if lab_ran:
        check(any("two-nodes" in c for c in config_ids()), "inter-node runs measured on the lab")
        answered(["slopes differ"])
        answered(["curves cross"])
elif study == "seed004":
    for cid in ("two-ints", "packet-size"):
        for run, _, _ in records(cid):
            prov = str(run["transport"].get("provider", ""))
            check("vader" in prov and "tcp" not in prov, f"{cid}: one box through shared memory ({prov})")
    for cid in config_ids("packet-size"):
        sweep_complete(cid)
    answered(["two ints, one box"])
    if lab_ran:
        answered(["two ints, two boxes"])
        answered(["20"])
        answered(["Steps"])
text = pdftotext(pdflatex(report))
check(man["title"].split(":")[0] in text, "the LaTeX report compiles and carries the study")
