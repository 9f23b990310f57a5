"""How each MPI module is started, and how it must not be."""
LAUNCH = {
    "openmpi": ["mpirun.openmpi", "--oversubscribe", "-np", "2"],
    "mpich": ["mpiexec.mpich", "-n", "2"],
}
OTHER = {"openmpi": "mpich", "mpich": "openmpi"}
