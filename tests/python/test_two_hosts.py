"""Runs whose ranks sit on two hosts: the runner's warnings travel into the analysis, and a
latency no network can give between two hosts is flagged even when the library said nothing."""
import json

import synth
from versus.load import load_file

SIZES = [8, 64, 1024, 65536]


def write(tmp_path, name, model, hosts, warnings=None):
    lines = synth.make_lines(model, SIZES, count=60, seed=1, name="ucx")
    rec = json.loads(lines[0])
    rec["hosts"] = hosts
    if warnings is not None:
        rec["warnings"] = warnings
    lines[0] = json.dumps(rec)
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return p


def shared_memory(n):
    return 200 + 0.1 * n          # 0.1 us one way at 8 B: one machine


def network(n):
    return 10000 + 1.0 * n        # 5 us one way: a network


def test_too_fast_for_two_hosts_is_flagged(tmp_path):
    run = load_file(write(tmp_path, "a.jsonl", shared_memory, ["box-a", "box-b"]))[0]
    assert any("faster than any network" in w and "box-a" in w for w in run.warnings)


def test_network_speed_or_one_host_is_not_flagged(tmp_path):
    assert not load_file(write(tmp_path, "b.jsonl", network, ["box-a", "box-b"]))[0].warnings
    assert not load_file(write(tmp_path, "c.jsonl", shared_memory, ["n1", "n1"]))[0].warnings


def test_runner_warning_is_kept_once(tmp_path):
    said = "ranks 0 and 1 run on different hosts ('box-a', 'box-b') but ucx moves the messages through shared memory"
    run = load_file(write(tmp_path, "d.jsonl", shared_memory, ["box-a", "box-b"], [said]))[0]
    assert [w for w in run.warnings if said in w] and not [w for w in run.warnings if "faster than" in w]


def test_a_comparison_of_one_configuration_on_one_host_and_on_two_names_each_side(tmp_path):
    from versus.compare import compare_runs, named_statements
    one = load_file(write(tmp_path, "one.jsonl", shared_memory, ["n1", "n1"]))
    two = load_file(write(tmp_path, "two.jsonl", network, ["box-a", "box-b"]))
    cmp = compare_runs(two, one)
    assert cmp.a_label != cmp.b_label and "2 hosts" in cmp.a_label and "one host" in cmp.b_label
    said = named_statements(compare_runs(two, one, labels=("two boxes", "one box")), "two boxes", "one box")
    assert any("two boxes is" in s and "than one box" in s for s in said)
