"""A campaign's plan: three launches of every configuration by default, run
interleaved (every configuration's first launch before any second one), and
--quick keeps the three launches a claim needs."""
from versus.campaign import load_campaign
from versus.launches import CLAIM_LAUNCHES

CONFIG = """
title = "plan"
[defaults]
sizes = "8,64"
iterations = 100
[[run]]
id = "a"
transport = "shm"
[[run]]
id = "b"
transport = "tcp"
variants = ["blocking", "nonblocking"]
[[run]]
id = "c"
transport = "ucx"
launches = 5
"""


def plan(tmp_path, text, scale=1.0):
    p = tmp_path / "c.toml"
    p.write_text(text, encoding="utf-8")
    return load_campaign(p, scale)


def test_three_launches_by_default_interleaved_across_configurations(tmp_path):
    camp = plan(tmp_path, CONFIG)
    assert CLAIM_LAUNCHES == 3
    ids = [r.id for r in camp.runs]
    assert ids == ["a.L0", "b-blocking.L0", "b-nonblocking.L0", "c.L0",
                   "a.L1", "b-blocking.L1", "b-nonblocking.L1", "c.L1",
                   "a.L2", "b-blocking.L2", "b-nonblocking.L2", "c.L2", "c.L3", "c.L4"]
    assert [r.launch_id for r in camp.runs if r.config_id == "c"] == [0, 1, 2, 3, 4]


def test_quick_keeps_three_launches_and_an_explicit_count_is_kept(tmp_path):
    quick = plan(tmp_path, CONFIG, scale=0.05)
    assert {r.config_id: sum(x.config_id == r.config_id for x in quick.runs) for r in quick.runs} == \
        {"a": 3, "b-blocking": 3, "b-nonblocking": 3, "c": 3}
    one = plan(tmp_path, 'launches = 1\n' + CONFIG.replace('launches = 5', 'launches = 2'))
    assert [r.id for r in one.runs] == ["a", "b-blocking", "b-nonblocking", "c.L0", "c.L1"]


def test_quick_extra_args_replace_extra_args_only_when_reduced(tmp_path):
    text = CONFIG.replace('id = "a"\n', 'id = "a"\nextra_args = ["--adaptive", "--adaptive-max-sizes", "500"]\n'
                          'quick_extra_args = ["--adaptive", "--adaptive-max-sizes", "60"]\n')
    full = {r.config_id: r.extra_args for r in plan(tmp_path, text).runs}
    quick = {r.config_id: r.extra_args for r in plan(tmp_path, text, scale=0.05).runs}
    assert full["a"] == ["--adaptive", "--adaptive-max-sizes", "500"]
    assert quick["a"] == ["--adaptive", "--adaptive-max-sizes", "60"]
    assert full["c"] == quick["c"] == []


def test_quick_extra_args_must_be_a_list(tmp_path):
    import pytest
    from versus.load import InputError
    with pytest.raises(InputError, match="quick_extra_args must be a list"):
        plan(tmp_path, CONFIG.replace('id = "a"\n', 'id = "a"\nquick_extra_args = "--adaptive"\n'))
