"""The report groups runs into configurations with the definition `versus
compare` checks launches against (load.configuration_key), and compares each
configuration as its launches: a campaign with launches = 2 states
between-launch claims."""
import json

import numpy as np
import pytest

import synth
from versus.load import InputError, check_same_configuration, configuration_key, load_file
from versus.report import build_model, collect

SIZES = [1 << k for k in range(3, 15)]


def launch_lines(model, cid, launch_id, seed, env=None, pid=1000):
    """One launch as versus-run writes it: its own run_id, job variables and pids."""
    out = []
    for line in synth.make_lines(model, SIZES, count=80, seed=seed, name="shm", launch_id=launch_id,
                                 run_id=f"host-{cid}-{pid}"):
        rec = json.loads(line)
        if rec["record"] == "run":
            rec["transport"]["options"] = {"label": cid}
            rec["env"] = {"VERSUS_JOB": f"local-{pid}", "VERSUS_RENDEZVOUS": f"127.0.0.1:{40000 + pid}",
                          "VERSUS_LISTEN_FD": "3", **(env or {})}
            rec["hosts"] = [f"node{pid % 7}", f"node{pid % 7}"]
            rec["placement"] = {"policy": "auto", "cpus_arg": None, "relation": "l3",
                                "ranks": [{"rank": r, "host": f"node{pid % 7}", "pid": pid + r,
                                           "cpus_hwloc": str((pid + r) % 2)} for r in (0, 1)]}
        out.append(json.dumps(rec))
    return "\n".join(out) + "\n"


def campaign(tmp_path, launches=2):
    """Two configurations (fast, slow), `launches` launches each, and the manifest."""
    rng = np.random.default_rng(3)
    entries = []
    for cid, scale in (("fast", 0.6), ("slow", 1.0)):
        for k in range(launches):
            f = scale * rng.uniform(0.98, 1.02)
            name = f"{cid}.L{k}.jsonl"
            pid = 100 * len(entries) + 11
            (tmp_path / name).write_text(launch_lines(synth.hockney(2000 * f, 0.1 * f), cid, k,
                                                      seed=len(entries), pid=pid), encoding="utf-8")
            entries.append({"id": f"{cid}.L{k}", "config_id": cid, "file": name, "transport": "shm",
                            "pattern": "pingpong", "variant": "blocking", "launch_id": k, "status": "ok"})
    (tmp_path / "campaign.json").write_text(json.dumps({"title": "launches", "runs": entries}), encoding="utf-8")
    return tmp_path


def test_a_report_of_a_campaign_with_two_launches_states_between_launch_claims(tmp_path):
    runs, entries, manifests = collect([str(campaign(tmp_path))])
    model = build_model(runs, entries, manifests, None)
    (group,) = model["groups"]
    assert [r["launches"] for r in group["rows"]] == [2, 2]
    (cmp,) = group["comparisons"]
    assert (cmp["a"], cmp["b"]) == ("slow", "fast")
    claims = [s for s in cmp["statements"] if s["mark"] in "+-"]
    assert claims, cmp["statements"]
    assert cmp["claims"] and cmp["scope"].startswith("across launches (2 vs 2"), cmp["scope"]
    for s in claims:                       # the scope is said once for the comparison, not per statement
        assert "across launches" not in s["text"] and "these two launches" not in s["text"], s["text"]
        assert "slower" in s["text"] and not s["text"].startswith("slow"), s["text"]   # no subject: said once
    assert any("between launches" in n for n in cmp["notes"])


def test_launch_level_facts_do_not_split_a_configuration(tmp_path):
    campaign(tmp_path)
    runs = [load_file(p)[0] for p in sorted(tmp_path.glob("fast.L*.jsonl"))]
    assert runs[0].record["env"]["VERSUS_JOB"] != runs[1].record["env"]["VERSUS_JOB"]
    assert runs[0].record["hosts"] != runs[1].record["hosts"]
    check_same_configuration(runs)
    assert configuration_key(runs[0]) == configuration_key(runs[1])


def test_a_library_setting_or_a_campaign_name_does_split_it(tmp_path):
    model = synth.hockney(2000, 0.1)
    a = tmp_path / "a.jsonl"
    b = tmp_path / "b.jsonl"
    a.write_text(launch_lines(model, "x", 0, 1, {"UCX_TLS": "tcp"}, pid=1), encoding="utf-8")
    b.write_text(launch_lines(model, "x", 1, 2, {"UCX_TLS": "sm"}, pid=2), encoding="utf-8")
    ra, rb = load_file(a)[0], load_file(b)[0]
    with pytest.raises(InputError, match="environment"):
        check_same_configuration([ra, rb])
    b.write_text(launch_lines(model, "x", 1, 2, {"UCX_TLS": "tcp"}, pid=2), encoding="utf-8")
    rb = load_file(b)[0]
    check_same_configuration([ra, rb])
    ra.config_name, rb.config_name = "one", "two"
    with pytest.raises(InputError, match="configuration name"):
        check_same_configuration([ra, rb])
