"""Where a campaign's ranks go: nodes, hosts and launcher_args become each launcher's own options;
the local launcher refuses them; a run that needs more nodes than there are is skipped with the
reason; bad values are refused with the key named."""
import pytest

from versus import modules as vsmod
from versus.campaign import build_command, load_campaign, nodes_available
from versus.load import InputError

MPI = {"name": "openmpi", "bootstrap": True, "loads": True,
       "launcher": {"kind": "mpirun", "program": "mpirun.openmpi", "srun_mpi": "pmix"}}
HYDRA = {"name": "mpich", "bootstrap": True, "loads": True,
         "launcher": {"kind": "mpiexec", "program": "mpiexec.mpich", "srun_mpi": "pmi2"}}
PLAIN = {"name": "tcp", "loads": True}
MODS = {m["name"]: m for m in (MPI, HYDRA, PLAIN)}


def test_srun_spreads_over_nodes():
    before, after = vsmod.wrap("srun", 4, MPI, MODS, nodes=2, launcher_args=["--exclusive"])
    assert before == ["srun", "-n", "4", "-N", "2", "--ntasks-per-node=2", "--cpu-bind=none", "--mpi=pmix",
                      "--exclusive"]
    assert after == []


def test_mpirun_with_hosts_and_nodes():
    before, _ = vsmod.wrap("mpirun", 2, MPI, MODS, nodes=2, hosts=["n1", "n2"], root=False,
                           launcher_args=["--mca", "btl", "self,tcp"])
    assert before == ["mpirun.openmpi", "-np", "2", "--bind-to", "none", "--host", "n1:1,n2:1",
                      "--map-by", "ppr:1:node", "--mca", "btl", "self,tcp"]
    one, _ = vsmod.wrap("mpirun", 2, MPI, MODS, root=False)
    assert "--oversubscribe" in one and "--host" not in one


def test_mpiexec_hosts_and_ppn():
    before, _ = vsmod.wrap("mpiexec", 2, HYDRA, MODS, nodes=2, hosts=["n1", "n2"])
    assert before == ["mpiexec.mpich", "-n", "2", "-hosts", "n1,n2", "-ppn", "1"]


def test_local_refuses_nodes_and_a_host_count_must_match():
    with pytest.raises(ValueError, match="local launcher"):
        vsmod.wrap("local", 2, PLAIN, MODS, nodes=2)
    with pytest.raises(ValueError, match="3 hosts"):
        vsmod.wrap("mpirun", 2, MPI, MODS, nodes=2, hosts=["a", "b", "c"])


def test_nodes_available():
    assert nodes_available({}) == 1
    assert nodes_available({"SLURM_JOB_NUM_NODES": "4"}) == 4
    assert nodes_available({"SLURM_NNODES": "2"}) == 2
    assert nodes_available({}, lab=True) == 2


def plan(tmp_path, body):
    p = tmp_path / "c.toml"
    p.write_text('title = "t"\n[[run]]\nid = "a"\ntransport = "openmpi"\nsizes = "8"\nlaunches = 1\n' + body,
                 encoding="utf-8")
    return load_campaign(p)


@pytest.mark.parametrize("body,what", [("nodes = 3\n", "divides np"), ("nodes = \"two\"\n", "nodes"),
                                       ("np = 0\n", "np"), ("hosts = 5\n", "hosts"),
                                       ("launcher_args = \"--x\"\n", "launcher_args")])
def test_bad_values_are_refused_naming_the_key(tmp_path, body, what):
    with pytest.raises(InputError, match=what):
        plan(tmp_path, body)


def test_command_under_srun_in_a_two_node_allocation(tmp_path):
    spec = plan(tmp_path, "nodes = 2\n").runs[0]
    cmd = build_command(spec, "/x/versus-run", tmp_path / "o.jsonl", {"SLURM_JOB_ID": "7"}, MODS)
    assert cmd[:6] == ["srun", "-n", "2", "-N", "2", "--ntasks-per-node=1"]
