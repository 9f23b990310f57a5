"""Load the Spack recipe (contrib/spack/packages/versus/package.py) without Spack.

The recipe starts with `from spack.package import *`.  This module puts a stand-in
`spack.package` into sys.modules that exports only names Spack's package API really exports
(the directives, MesonPackage through Package API v1.0, InstallError), so a recipe using a
name Spack does not export fails to load here as it would under Spack.  The directives
record their calls instead of building Spack's metadata; the recipe's methods run against
FakeSpec, which understands only what versus's recipe asks of a spec.
"""
import contextlib
import os
import sys
import types

#: Spack's directives (spack.directives, re-exported by spack.package), as of Package API v2.2
DIRECTIVES = ("build_system", "can_splice", "conditional", "conflicts", "depends_on", "extends",
              "license", "maintainers", "patch", "provides", "redistribute", "requires",
              "resource", "variant", "version")
#: what MesonPackage itself declares (Spack's build_systems/meson.py): variants a `when=` may name
MESON_PACKAGE_VARIANTS = ("buildtype", "default_library", "strip")
#: MesonBuilder's methods and attributes a recipe may define (package_methods, package_attributes)
MESON_PACKAGE_HOOKS = ("meson_args", "check", "build_targets", "install_targets",
                       "build_time_test_callbacks", "root_mesonlists_dir", "std_meson_args",
                       "build_directory")
#: PackageBase hooks a recipe may define
PACKAGE_HOOKS = ("url_for_version", "setup_run_environment", "setup_build_environment",
                 "setup_dependent_build_environment", "setup_dependent_run_environment",
                 "setup_dependent_package", "flag_handler", "patch", "libs", "headers")


class Call:
    def __init__(self, name, args, kwargs, when):
        self.name, self.args, self.kwargs = name, args, dict(kwargs)
        if when and "when" not in self.kwargs:
            self.kwargs["when"] = " ".join(when)
        elif when:
            self.kwargs["when"] = " ".join(when + [self.kwargs["when"]])

    def __repr__(self):
        return f"{self.name}({', '.join(map(repr, self.args))}, {self.kwargs})"


class InstallError(Exception):
    pass


class Prefix(str):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Prefix(os.path.join(self, name))


class MesonPackage:
    """Stands in for Spack's MesonPackage: a spec, a prefix, nothing else."""

    def __init__(self, spec, prefix="/spack/opt/versus"):
        self.spec = spec
        self.prefix = Prefix(prefix)


class FakeSpec:
    """A concrete spec as far as the recipe looks at it: variants, the MPI provider's name
    and Python's command."""

    def __init__(self, variants, mpi=None, python="/spack/opt/python/bin/python3"):
        self.variants, self.mpi, self.python = dict(variants), mpi, python

    def satisfies(self, constraint):
        c = constraint.strip()
        if c[:1] in "+~" and c[1:].isidentifier():
            if c[1:] not in self.variants:
                raise KeyError(f"the recipe asks about variant {c[1:]!r}, which it does not declare")
            return self.variants[c[1:]] == (c[0] == "+")
        raise ValueError(f"the stand-in spec understands only +variant/~variant, not {constraint!r}")

    def __contains__(self, constraint):
        return self.satisfies(constraint)

    def __getitem__(self, name):
        if name == "mpi" and self.mpi:
            return types.SimpleNamespace(name=self.mpi, prefix=Prefix(f"/spack/opt/{self.mpi}"))
        if name == "python":
            return types.SimpleNamespace(name="python", command=types.SimpleNamespace(path=self.python))
        raise KeyError(f"{name} is not a dependency of this spec")


class FakeEnv:
    def __init__(self):
        self.changes = []

    def __getattr__(self, verb):
        if verb.startswith("__"):
            raise AttributeError(verb)
        return lambda *a, **k: self.changes.append((verb,) + a)


def load(path):
    """(module, calls): the recipe executed with the stand-in spack.package, and the directive
    calls its class body made, in order."""
    calls, when_stack = [], []

    def directive(name):
        def record(*args, **kwargs):
            calls.append(Call(name, args, kwargs, when_stack))
        record.__name__ = name
        return record

    @contextlib.contextmanager
    def when(spec):
        when_stack.append(spec)
        try:
            yield
        finally:
            when_stack.pop()

    api = types.ModuleType("spack.package")
    exported = {d: directive(d) for d in DIRECTIVES}
    exported.update(when=when, MesonPackage=MesonPackage, InstallError=InstallError)
    api.__dict__.update(exported)
    api.__all__ = sorted(exported)
    spack = types.ModuleType("spack")
    spack.package = api
    saved = {k: sys.modules.get(k) for k in ("spack", "spack.package")}
    sys.modules.update({"spack": spack, "spack.package": api})
    try:
        module = types.ModuleType("spack.pkg.versus.versus")
        module.__file__ = path
        with open(path, encoding="utf-8") as f:
            code = compile(f.read(), path, "exec")
        exec(code, module.__dict__)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    return module, calls
