"""How a test starts one backend, from what the module declares.

A backend is named on the test's command line as the suites' Meson files write it
(tests/meson.build, vs_test_backends): MODULE, or MODULE:KEY=VALUE[,KEY=VALUE...] for a
test variant a folder under transports/ declares (one per provider of a library).  How it
is started comes from the module's own declaration (`versus-run --list --json`): a module
that brings its own bootstrap runs under the launcher it names, every other one under
versus-run's local launcher.  No transport is named here.
"""
import vstest as vt
from versus import modules as vsmod


def split(spec):
    """(module, [KEY=VALUE, ...]) of a backend spec."""
    module, _, opts = spec.partition(":")
    return module, [o for o in opts.split(",") if o]


def declaration(module):
    """The module's declaration; skip (77) when it was not built, fail when it does not load."""
    vt.need_module(module)
    declared = vsmod.declared(vt.RUNNER)
    mod = declared.get(module)
    vt.check(mod is not None and mod.get("loads"), f"versus-run --list --json declares {module} and it loads")
    return mod, declared


def prepare(spec, np=2, env_keys=()):
    """Skip (77) when the module or its launcher is missing.  Returns (module, launcher argv or
    None, versus-run arguments: --transport, the variant's options, and for a module without its
    own bootstrap --launch local -n NP).  env_keys: variables an mpirun-style launcher must pass on."""
    module, opts = split(spec)
    mod, declared = declaration(module)
    args = ["--transport", module]
    for o in opts:
        args += ["--transport-opt", o]
    if mod.get("bootstrap"):
        before, after = vsmod.wrap(mod["launcher"]["kind"], np, mod, declared, env_keys=env_keys)
        vt.need_program(before[0])
        return module, before, args + after
    _, after = vsmod.wrap("local", np, mod, declared)
    return module, None, args + after


def own_bootstrap(module):
    """True when the module is started by its own launcher (skip-free: needs the module built)."""
    mod, _ = declaration(module)
    return bool(mod.get("bootstrap"))


def launcher_of_kind(kind):
    """The program of the given launcher kind (mpirun, mpiexec) a built module declares;
    skip (77) when no module declares one or the program is missing."""
    declared = vsmod.declared(vt.RUNNER)
    for m in declared.values():
        hint = m.get("launcher") or {}
        if m.get("loads") and hint.get("kind") == kind:
            return vt.need_program(hint["program"])
    print(f"SKIP: no built module declares a launcher of kind {kind}", flush=True)
    raise SystemExit(vt.SKIP)
