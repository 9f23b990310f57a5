# Spack package recipe for versus (a repository layout: spack repo add contrib/spack).
from spack.package import *


class Versus(MesonPackage):
    """Portable multi-transport benchmark and comparison framework for HPC
    communication: one runner measures identical ping-pong, stream and
    double-buffer patterns over Open MPI, MPICH, UCX, libfabric, shared memory
    and TCP, and a Python report generator turns the raw samples into
    comparative HTML and LaTeX reports with fitted models, detected protocol
    transitions and statistically sound claims."""

    homepage = "https://example.org/versus"
    git = "https://example.org/versus.git"

    maintainers("versus-maintainers")
    license("BSD-3-Clause")

    version("main", branch="main")

    # one variant per transport backend (meson_options.txt: a feature each)
    variant("openmpi", default=False, description="MPI transport built against Open MPI")
    variant("mpich", default=False, description="MPI transport built against MPICH")
    variant("ucx", default=True, description="UCX transport")
    variant("libfabric", default=True, description="libfabric (OFI) transport")
    variant("hwloc", default=True, description="hwloc placement and topology")

    conflicts("+openmpi", when="+mpich", msg="one MPI per installation: build two for both")

    depends_on("c", type="build")
    depends_on("meson@0.63:", type="build")
    depends_on("ninja", type="build")
    depends_on("pkgconfig", type="build")

    depends_on("openmpi", when="+openmpi")
    depends_on("mpich", when="+mpich")
    depends_on("ucx", when="+ucx")
    depends_on("libfabric", when="+libfabric")
    depends_on("hwloc", when="+hwloc")

    # the analysis and report generator (the `versus` command)
    depends_on("python@3.9:", type=("build", "run"))
    depends_on("py-numpy", type="run")
    depends_on("py-scipy", type="run")
    depends_on("py-jinja2", type="run")
    depends_on("py-matplotlib", type="run")
    depends_on("py-pyarrow", type="run")
    depends_on("py-ruptures", type="run")
    depends_on("py-plotly", type="run")        # the interactive figures of the HTML report

    def meson_args(self):
        spec = self.spec

        def feature(variant, option):
            return f"-D{option}={'enabled' if spec.satisfies(f'+{variant}') else 'disabled'}"

        return [
            feature("openmpi", "openmpi"),
            feature("mpich", "mpich"),
            feature("ucx", "ucx"),
            feature("libfabric", "ofi"),
            feature("hwloc", "hwloc"),
            f"-Dpython={spec['python'].command.path}",
            "-Dfault_injection=false",
        ]

    def setup_run_environment(self, env):
        env.prepend_path("MANPATH", self.prefix.share.man)
