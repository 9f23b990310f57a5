"""ReFrame checks that run versus: one transport's ping-pong, a sanity function on the JSONL
it writes, and two performance variables (one-way latency at 8 B, bandwidth at 1 MiB).

  VersusLocal    shm and tcp under versus's own local launcher (one ReFrame task with two
                 CPUs; versus-run forks its two ranks): valid on every partition and in every
                 programming environment, so a site's configuration or ReFrame's builtin one
                 selects it as it is.
  VersusSrun     tcp, Open MPI and MPICH with one rank per task under srun (two tasks, one
                 node): valid on the partitions whose launcher is srun; the MPI transports
                 only in programming environments with the feature `mpi` (tcp in any).

    reframe -c versus_check.py -r                        # ReFrame's builtin configuration
    reframe -C site.py -c versus_check.py -r             # a site's: VersusSrun on its srun partitions

References come from a baseline (`versus baseline save`) exported for a system and partition
(`versus baseline export --reframe SYSTEM:PARTITION BASE.json -o refs.json`) and are read from the
file named by `-S references_file=refs.json` or the environment variable VERSUS_RFM_REFERENCES.
Without one the checks have no reference: ReFrame reports the two figures and judges only the
sanity function.  The JSONL of each run is kept in the check's output directory (keep_files).
docs/install.md, "ReFrame", says more.
"""
import json
import os
import statistics

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, performance_function, run_after, run_before, sanity_function, variable

REFERENCES_FORMAT = "versus-reframe-references"


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


def load_references(path, check, transport):
    """The reference table of one check and transport in a file written by `versus baseline
    export --reframe`: {"SYSTEM:PARTITION": {"latency_8B": (value, lower, upper, "us"), ...}},
    empty when the file holds no entry for them."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as ex:
        raise ValueError(f"references_file {path}: {ex.strerror}") from None
    except ValueError:
        raise ValueError(f"references_file {path}: not JSON; write it with versus baseline export --reframe") from None
    if not isinstance(doc, dict) or doc.get("format") != REFERENCES_FORMAT or doc.get("version") != 1:
        raise ValueError(f"references_file {path}: not a references file of versus ({REFERENCES_FORMAT}, version 1); "
                         "write it with versus baseline export --reframe")
    table = ((doc.get("references") or {}).get(check) or {}).get(transport) or {}
    return {key: {var: tuple(v) for var, v in entry.items()} for key, entry in table.items()}


class VersusBase(rfm.RunOnlyRegressionTest):
    valid_systems = ["*"]
    valid_prog_environs = ["*"]
    executable = "versus-run"
    sizes = [8, 1048576]
    iterations = variable(int, value=1000)
    #: A references file of `versus baseline export --reframe` ('' for none: the figures are
    #: reported, not judged).
    references_file = variable(str, value=os.environ.get("VERSUS_RFM_REFERENCES", ""))
    keep_files = ["versus.jsonl"]
    tags = {"versus", "benchmark"}

    def versus_args(self):
        return ["-t", self.transport, "-s", ",".join(map(str, self.sizes)), "-i", str(self.iterations),
                "--timeout", "60", "--out", "versus.jsonl", "--quiet"]

    @run_after("setup")
    def set_references(self):
        if self.references_file:
            self.reference = load_references(self.references_file, type(self).__name__, self.transport)

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
    """versus's local launcher: one ReFrame task, two ranks forked by versus-run (two CPUs for
    it where the scheduler allocates them)."""
    transport = parameter(["shm", "tcp"])
    num_tasks = 1
    num_cpus_per_task = 2

    @run_before("run")
    def set_args(self):
        self.executable_opts = self.versus_args() + ["--launch", "local", "-n", "2"]


@rfm.simple_test
class VersusSrun(VersusBase):
    """One rank per task under srun: Open MPI needs srun's PMIx plugin and MPICH its PMI2 one
    (docs/launching.md); the partition's `access` in the site's configuration says where."""
    transport = parameter(["tcp", "openmpi", "mpich"])
    num_tasks = 2
    num_tasks_per_node = 2      # one node; set 1 for one rank per node on two

    @run_after("init")
    def select(self):
        # ReFrame selects by partition features and extras, not by launcher: name the partitions
        # of the current system that launch with srun (none: the check is not selected).
        self.valid_systems = [p.fullname for p in self.current_system.partitions
                              if p.launcher_type.registered_name == "srun"]
        if self.transport in ("openmpi", "mpich"):
            self.valid_prog_environs = ["+mpi"]

    @run_before("run")
    def set_args(self):
        self.executable_opts = self.versus_args()
        mpi = {"openmpi": "pmix", "mpich": "pmi2"}.get(self.transport)
        if mpi:
            self.job.launcher.options = [f"--mpi={mpi}"]
