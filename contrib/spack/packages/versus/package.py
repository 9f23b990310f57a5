# Spack recipe for versus.  contrib/spack is a Spack package repository (repo.yaml, namespace
# "versus"): `spack repo add contrib/spack`, then `spack install versus`.  docs/install.md
# says how a release updates the version list (contrib/spack/update_checksum.py).
from spack.package import *

#: versus's web address and the directory of its release tarballs, one per version, each
#: named as `meson dist --formats gztar` names it: versus-<version>.tar.gz.  versus has no
#: public host yet; ".invalid" is a name reserved never to resolve, so that nothing is fetched
#: from a guess.  A site either sets its own address here or keeps it and puts the tarball in
#: a Spack mirror (<mirror>/versus/versus-<version>.tar.gz), where the checksum finds it.
HOMEPAGE = "https://versus.invalid"
RELEASES = f"{HOMEPAGE}/releases"


class Versus(MesonPackage):
    """Portable multi-transport benchmark and comparison framework for HPC
    communication: one runner measures identical ping-pong, stream and
    double-buffer patterns over MPI, UCX, libfabric, shared memory and TCP,
    and a Python report generator turns the raw samples into comparative
    HTML and LaTeX reports with fitted models, detected protocol transitions
    and statistically sound claims."""

    homepage = HOMEPAGE
    url = f"{RELEASES}/versus-0.1.0.tar.gz"

    license("BSD-3-Clause")

    # newest first; a release adds its line with contrib/spack/update_checksum.py
    version("0.1.0", sha256="b767b45d6d24ae124037055fa11024dd33733c0bc32c53f1aa55109c62bf01c0")

    variant("mpi", default=True, description="MPI transport, built against the spec's MPI")
    variant("ucx", default=True, description="UCX transport")
    variant("libfabric", default=True, description="libfabric (OFI) transport")
    variant("hwloc", default=True, description="hwloc placement and topology")
    variant("parquet", default=True, description="Parquet export of the analysis (py-pyarrow)")

    depends_on("c", type="build")
    depends_on("meson@0.63:", type="build")
    depends_on("ninja", type="build")
    depends_on("pkgconfig", type="build")
    # versus-run(1) and versus(1) are made from the programs' --help by help2man
    depends_on("help2man", type="build")

    # The runner starts the provider's own launcher (mpirun, mpiexec): needed at run time too.
    depends_on("mpi", when="+mpi", type=("build", "link", "run"))
    # The Meson build knows two MPI flavours, each by its pkg-config file (ompi-c, mpich);
    # another provider needs its flavour added to transports/mpi/meson.build first.
    requires(
        "^[virtuals=mpi] openmpi",
        "^[virtuals=mpi] mpich",
        policy="one_of",
        when="+mpi",
        msg="versus builds its MPI transport against Open MPI or MPICH",
    )
    depends_on("ucx", when="+ucx")
    depends_on("libfabric", when="+libfabric")
    depends_on("hwloc", when="+hwloc")

    # The `versus` command (reports/pyproject.toml's dependencies).  versus(1) is made at build
    # time by running `versus --help`, which needs only the standard library: Python to build and
    # run, its packages to run.
    depends_on("python@3.11:", type=("build", "run"))
    depends_on("py-numpy@1.22:", type="run")
    depends_on("py-scipy@1.8:", type="run")
    depends_on("py-jinja2@3.0:", type="run")
    depends_on("py-matplotlib@3.5:", type="run")
    depends_on("py-plotly@5:", type="run")
    depends_on("py-pyarrow@14:", type="run", when="+parquet")
    # ruptures (change points of `versus history show`) has no Spack package: not a dependency;
    # without it the history is shown without change points.

    #: Meson feature of each variant that is a plain on/off switch
    _features = (("ucx", "ucx"), ("libfabric", "ofi"), ("hwloc", "hwloc"))
    #: Meson feature of each MPI provider the build knows
    _mpi_flavours = ("openmpi", "mpich")

    def url_for_version(self, version):
        return f"{RELEASES}/versus-{version}.tar.gz"

    def meson_args(self):
        spec = self.spec
        provider = spec["mpi"].name if spec.satisfies("+mpi") else None
        if provider is not None and provider not in self._mpi_flavours:
            raise InstallError(f"versus has no MPI flavour for {provider}")
        args = [f"-D{f}={'enabled' if f == provider else 'disabled'}" for f in self._mpi_flavours]
        for variant, option in self._features:
            args.append(f"-D{option}={'enabled' if spec.satisfies('+' + variant) else 'disabled'}")
        args.append(f"-Dpython={spec['python'].command.path}")
        args.append("-Dfault_injection=false")
        return args

    def setup_run_environment(self, env):
        # bash completion (share/bash-completion/completions) is found through XDG_DATA_DIRS;
        # PATH and MANPATH come from Spack's own prefix inspections
        env.prepend_path("XDG_DATA_DIRS", self.prefix.share)
