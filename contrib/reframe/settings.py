"""An example ReFrame configuration for the versus checks, for a machine without one of its
own: `local` (this machine: the local scheduler and launcher) and `slurm` (a Slurm partition
launched with srun; edit the partition's access options and the hostnames pattern for a real
cluster).  The checks need none of it: they are selected by what a partition and an
environment are (any partition; for VersusSrun a partition launched with srun; for its MPI
transports an environment with the feature `mpi`), so a site's configuration or ReFrame's
builtin one selects them too.

ReFrame's `slurm` scheduler follows jobs with sacct and so needs job accounting; on a cluster
without it set VERSUS_RFM_SLURM_SCHEDULER=squeue (ReFrame's backend that polls squeue only)."""
import os

site_configuration = {
    "systems": [
        {
            "name": "local",
            "descr": "this machine, no scheduler",
            "hostnames": [".*"],
            "partitions": [
                {"name": "default", "scheduler": "local", "launcher": "local", "environs": ["versus"]},
            ],
        },
        {
            "name": "slurm",
            "descr": "a Slurm cluster (or the single-node Slurm of versus's tests)",
            "hostnames": [".*"],
            "partitions": [
                {"name": "compute", "scheduler": os.environ.get("VERSUS_RFM_SLURM_SCHEDULER", "slurm"),
                 "launcher": "srun", "access": [],
                 "environs": ["versus"], "max_jobs": 2},
            ],
        },
    ],
    "environments": [{"name": "versus", "cc": "cc", "features": ["mpi"]}],
}
