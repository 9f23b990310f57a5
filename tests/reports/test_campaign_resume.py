"""A campaign goes on past a failing run and records it (exit code, stderr
tail), records exit 77 and unbuilt modules as skipped, kills a run at its
timeout, and a second invocation resumes: completed runs are not run again."""
import json
import os

from rtest import HERE, check, tmpdir, versus

work = tmpdir()
cfg = os.path.join(work, "c.toml")
with open(cfg, "w", encoding="utf-8") as f:
    f.write("""
title = "resume test"
timeout = 3
launches = 1
[defaults]
transport = "fake"
pattern = "pingpong"
variant = "blocking"
sizes = "8,64,512"
[[run]]
id = "good"
options = { behave = "ok" }
[[run]]
id = "bad"
options = { behave = "fail" }
[[run]]
id = "hangs"
options = { behave = "hang" }
[[run]]
id = "cannot"
options = { behave = "skip" }
[[run]]
id = "unbuilt"
transport = "broken"
[[run]]
id = "later"
options = { behave = "ok" }
launches = 2
""")
results = os.path.join(work, "results")
log = os.path.join(work, "calls.log")
env = {"FAKE_RUNNER_LOG": log}
runner = os.path.join(HERE, "fake_runner.py")
versus(["campaign", cfg, "--results", results, "--runner", runner], timeout=120, env=env)
man = json.load(open(os.path.join(results, "campaign.json"), encoding="utf-8"))
st = {e["id"]: e for e in man["runs"]}
check(list(st) == ["good", "bad", "hangs", "cannot", "unbuilt", "later.L0", "later.L1"],
      f"every run is in the manifest, in order ({list(st)})")
check(st["good"]["status"] == "ok" and st["later.L1"]["status"] == "ok",
      "runs after the failures still ran: the campaign went on")
check(st["bad"]["status"] == "failed" and st["bad"]["rc"] == 1, "a run exiting 1 is recorded as failed")
check("peer went away" in st["bad"]["stderr_tail"], "the failed run's stderr tail is kept")
check(st["hangs"]["status"] == "timeout" and st["hangs"]["duration_s"] < 30,
      f"a hanging run is killed at its timeout ({st['hangs']['duration_s']} s)")
check(st["cannot"]["status"] == "skipped" and st["cannot"]["rc"] == 77, "exit 77 is recorded as skipped")
check(st["unbuilt"]["status"] == "skipped" and "does not load" in st["unbuilt"]["note"],
      "a module that does not load is skipped with a note")
check(os.path.exists(os.path.join(results, "later.L1.jsonl")), "one result file per run and launch")
calls1 = [json.loads(ln) for ln in open(log, encoding="utf-8")]
runs1 = [c for c in calls1 if "--out" in c]
check(len(runs1) == 6, f"6 runner calls for 7 runs (the unbuilt module is not called), got {len(runs1)}")
launch_ids = [c[c.index("--launch-id") + 1] for c in runs1 if "behave=ok" in c]
check(launch_ids == ["0", "0", "1"], f"launch ids are passed to the runner ({launch_ids})")

os.remove(log)
versus(["campaign", cfg, "--results", results, "--runner", runner], timeout=120, env=env)
calls2 = [json.loads(ln) for ln in open(log, encoding="utf-8")]
again = sorted(os.path.basename(c[c.index("--out") + 1]) for c in calls2 if "--out" in c)
check(again == ["bad.jsonl", "cannot.jsonl", "hangs.jsonl"],
      f"the second invocation ran only the runs without a complete result ({again})")
man2 = json.load(open(os.path.join(results, "campaign.json"), encoding="utf-8"))
check(all(e.get("resumed") for e in man2["runs"] if e["id"] in ("good", "later.L0", "later.L1")),
      "completed runs are marked resumed in the new manifest")

# A campaign whose every run fails exits 1, and bad configs exit 2.
bad_cfg = os.path.join(work, "bad.toml")
with open(bad_cfg, "w", encoding="utf-8") as f:
    f.write('[[run]]\nid = "x"\ntransport = "fake"\nbogus = 1\n')
p = versus(["campaign", bad_cfg, "--results", results, "--runner", runner], check_rc=2)
check("unknown key" in p.stderr and "bogus" in p.stderr, "an unknown config key is refused with its name")
