"""ReFrame checks that run versus: one transport's ping-pong, a sanity function on the JSONL
it writes, and two performance variables (one-way latency at 8 B, bandwidth at 1 MiB) with
references and tolerances.

  VersusLocal    the non-MPI transports under versus's own local launcher (one ReFrame
                 task; versus-run forks its two ranks), for a workstation or one node;
  VersusSrun     an MPI or non-MPI transport with one rank per task under the system's
                 launcher (srun on a Slurm partition): two tasks, on one node or two.

    reframe -C contrib/reframe/settings.py --system local -c contrib/reframe/versus_check.py -r
    reframe -C contrib/reframe/settings.py --system slurm -c contrib/reframe/versus_check.py -n VersusSrun -r

References are this site's to set: the ones below pass any sane machine (a ping-pong of
8 B under 50 us one way, 1 MiB above 10 MB/s) and are meant to be replaced, per system
and partition, by the figures of a known-good run (docs/install.md, "ReFrame").
"""
import json
import os
import statistics

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, performance_function, run_before, sanity_function, variable


@sn.deferrable
def one_way_median_us(path, nbytes):
    """The median one-way time at nbytes, as versus reports it: round-trip samples / 2 (a
    sample is the mean of `batch` round trips)."""
    samples = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r.get("record") == "size" and r.get("bytes") == nbytes and "pair" not in r:
                samples += r["samples_ns"]
    if not samples:
        raise ValueError(f"{path}: no size record of {nbytes} B")
    return statistics.median(samples) / 2 / 1e3


@sn.deferrable
def run_completed(path, sizes):
    """The JSONL starts with a run record, holds a size record for every size asked and ends
    with status ok."""
    with open(path, encoding="utf-8") as f:
        recs = [json.loads(line) for line in f if line.strip()]
    seen = {r["bytes"] for r in recs if r.get("record") == "size"}
    return (recs[0].get("record") == "run" and recs[-1].get("record") == "end"
            and recs[-1].get("status") == "ok" and set(sizes) <= seen)


class VersusBase(rfm.RunOnlyRegressionTest):
    valid_prog_environs = ["*"]
    executable = "versus-run"
    sizes = [8, 1048576]
    iterations = variable(int, value=1000)
    reference = {
        "*": {"latency_8B": (1.0, None, 49.0, "us"),
              "bandwidth_1MiB": (1000.0, -0.99, None, "MB/s")},
    }
    tags = {"versus", "benchmark"}

    def versus_args(self):
        return ["-t", self.transport, "-s", ",".join(map(str, self.sizes)), "-i", str(self.iterations),
                "--timeout", "60", "--out", "versus.jsonl", "--quiet"]

    @sanity_function
    def validate(self):
        return sn.assert_true(run_completed(os.path.join(self.stagedir, "versus.jsonl"), self.sizes),
                              msg="versus.jsonl did not end with status ok and every size")

    @performance_function("us")
    def latency_8B(self):
        return one_way_median_us(os.path.join(self.stagedir, "versus.jsonl"), 8)

    @performance_function("MB/s")
    def bandwidth_1MiB(self):
        return 1048576 / one_way_median_us(os.path.join(self.stagedir, "versus.jsonl"), 1048576)


@rfm.simple_test
class VersusLocal(VersusBase):
    """versus's local launcher: one ReFrame task, two ranks forked by versus-run."""
    valid_systems = ["local"]
    transport = parameter(["shm", "tcp"])
    num_tasks = 1

    @run_before("run")
    def set_args(self):
        self.executable_opts = self.versus_args() + ["--launch", "local", "-n", "2"]


@rfm.simple_test
class VersusSrun(VersusBase):
    """One rank per task under the partition's launcher (srun): Open MPI needs srun's PMIx
    plugin and MPICH its PMI2 one (docs/launching.md); the partition's `launcher` and
    `access` in the settings say where."""
    valid_systems = ["slurm"]
    transport = parameter(["tcp", "openmpi", "mpich"])
    num_tasks = 2
    num_tasks_per_node = 2      # one node; set 1 for one rank per node on two

    @run_before("run")
    def set_args(self):
        self.executable_opts = self.versus_args()
        mpi = {"openmpi": "pmix", "mpich": "pmi2"}.get(self.transport)
        if mpi:
            self.job.launcher.options = [f"--mpi={mpi}"]
