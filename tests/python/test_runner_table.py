"""The campaign reads versus-run's own option table (versus-run --help --json): the short
options of a recorded command line are read as the runner defines them, a flag never takes
the next word as its value, and every option the campaign writes is one the runner has."""
import pytest

from versus import campaign as vc
from versus.load import InputError


@pytest.fixture(scope="module")
def info():
    try:
        return vc.probe_runner(vc.find_runner())
    except InputError as ex:
        pytest.skip(f"no runner: {ex}")


def test_the_runner_says_its_options_and_patterns(info):
    names = {o["name"] for o in info.options}
    assert {"transport", "iterations", "validate", "transport-opt"} <= names
    assert "pingpong" in info.patterns


def test_short_options_read_as_the_runner_defines_them(info):
    got = vc.runner_arguments(["-t", "shm", "-i", "5", "-q", "-O", "x.jsonl", "-o", "mode=block", "-s8"],
                              info.options)
    assert got == {"transport": "shm", "iterations": "5", "quiet": True, "out": "x.jsonl",
                   "transport-opt": {"mode": "block"}, "sizes": "8"}


def test_a_flag_does_not_take_the_next_word(info):
    assert vc.runner_arguments(["--validate", "stray"], info.options) == {"validate": True, "arguments": ["stray"]}
    # a value may start with "-" when the table says the option takes one
    assert vc.runner_arguments(["--cpus", "-1"], info.options) == {"cpus": "-1"}


def test_every_option_the_campaign_writes_is_the_runners(info, tmp_path):
    spec = vc.RunSpec(id="a", config_id="a", transport="shm", pattern="pingpong", variant="blocking",
                      options={"mode": "poll"}, env={}, sizes="8", iterations=5, iterations_large=3, warmup=1,
                      warmup_large=1, batch="auto", placement="auto", cpus="0,1", launcher="local", launch_id=0,
                      np=2, extra_args=[], nodes=None, hosts=[], launcher_args=[], timeout=60)
    cmd = vc.build_command(spec, info.path, tmp_path / "a.jsonl", {}, info.declared)
    written = {t[2:].split("=")[0] for t in cmd[cmd.index(info.path) + 1:] if t.startswith("--")}
    assert written <= {o["name"] for o in info.options}, written - {o["name"] for o in info.options}
