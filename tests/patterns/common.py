"""How each backend is started for the pattern tests, and small checks shared by them."""
import vstest as vt

MPIRUN = ["mpirun.openmpi", "--oversubscribe", "-np", "2"]
MPIEXEC = ["mpiexec.mpich", "-n", "2"]
LOCAL = ["--launch", "local", "-n", "2"]

# backend label -> (module, launcher command or None, extra versus-run arguments)
BACKENDS = {
    "openmpi": ("openmpi", MPIRUN, []),
    "mpich": ("mpich", MPIEXEC, []),
    "ucx": ("ucx", None, LOCAL),
    "ofi-tcp": ("ofi", None, LOCAL + ["--transport-opt", "provider=tcp"]),
    "ofi-shm": ("ofi", None, LOCAL + ["--transport-opt", "provider=shm"]),
    "shm": ("shm", None, LOCAL),
    "tcp": ("tcp", None, LOCAL),
}


def prepare(label):
    """Skip (77) when the module or its launcher is missing; return (module, launcher, args)."""
    module, launcher, extra = BACKENDS[label]
    vt.need_module(module)
    if launcher:
        vt.need_program(launcher[0])
    return module, launcher, ["--transport", module] + extra


def positive_ints(values):
    return isinstance(values, list) and all(isinstance(v, int) and v > 0 for v in values)
