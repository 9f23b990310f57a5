"""The Spack recipe, checked as far as it can be without Spack (none installs here: there is
no Spack on PyPI).  contrib/spack is a repository Spack accepts (repo.yaml with a namespace,
packages/<name>/package.py); the recipe loads with only names Spack's package API exports
(tests/install/spackstub.py) and passes the checks `spack audit packages` makes that need no
Spack (docstring, no boilerplate, sha256 versions, variant descriptions and defaults, variants
named in when= declared, no nested or variant-carrying virtual dependency); its meson_args,
run for Open MPI, MPICH and ~mpi, give each Meson feature of meson_options.txt the right
value; it declares the build tools the Meson build uses and the Python packages of
reports/pyproject.toml that Spack has; its versions match meson.build's and its URL scheme
names the tarball `meson dist` makes.  With VERSUS_SPACK_PACKAGES set to a checkout of
Spack's builtin packages, each dependency is also looked up there; with ruff on PATH the
recipe is checked with Spack's own style settings."""
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, HERE)
import spackstub  # noqa: E402
import vstest as vt  # noqa: E402

ROOT = os.environ.get("VERSUS_SOURCE_ROOT") or os.path.join(HERE, "..", "..")
REPO = os.path.join(ROOT, "contrib", "spack")
RECIPE = os.path.join(REPO, "packages", "versus", "package.py")
#: Python packages versus uses that Spack's builtin repository does not have (looked up in
#: spack-packages, July 2026): not dependencies of the recipe, and docs/install.md says so.
NOT_IN_SPACK = {"ruptures"}


def read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as f:
        return f.read()


# --- the repository layout -------------------------------------------------------------------
repo_yaml = open(os.path.join(REPO, "repo.yaml"), encoding="utf-8").read()
body = [ln for ln in repo_yaml.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
vt.check(body[:1] == ["repo:"], "repo.yaml: a `repo:` mapping")
keys = dict(re.match(r"\s+(\w+):\s*(\S*)", ln).groups() for ln in body[1:])
vt.check(re.fullmatch(r"[a-zA-Z][a-zA-Z0-9_]*(\.[a-zA-Z][a-zA-Z0-9_]*)*", keys.get("namespace", "")) is not None,
         f"repo.yaml: namespace {keys.get('namespace')!r} is a Python identifier (Spack's rule)")
vt.check(keys.get("api", "v1.0").startswith("v1."),
         "repo.yaml: Package API v1.x (packages/<name>/package.py, read by Spack 0.x and 1.x)")
vt.check(set(keys) <= {"namespace", "api", "subdirectory"}, f"repo.yaml: only keys Spack knows ({sorted(keys)})")
pkgdir = os.path.join(REPO, keys.get("subdirectory", "packages"))
names = sorted(os.listdir(pkgdir))
vt.check(names == ["versus"] and os.path.isfile(RECIPE), f"packages/: one package, versus/package.py ({names})")

# --- the recipe loads with Spack's package API only -------------------------------------------
try:
    module, calls = spackstub.load(RECIPE)
except NameError as ex:
    vt.fail(f"the recipe uses a name Spack's package API does not export (or the stand-in lacks): {ex}")
cls = module.Versus
vt.check(issubclass(cls, spackstub.MesonPackage), "class Versus(MesonPackage)")
vt.check(cls.__name__.lower() == "versus", "class name is the package name, capitalised")


def directive(name):
    return [c for c in calls if c.name == name]


# the class body defines only directives, Spack's hooks and its own private helpers
own = [k for k in vars(cls) if not k.startswith("__")]
unknown = [k for k in own if not k.startswith("_") and k not in spackstub.MESON_PACKAGE_HOOKS
           and k not in spackstub.PACKAGE_HOOKS and k not in ("homepage", "url", "git", "list_url")]
vt.check(not unknown, f"the class defines only Spack attributes and hooks ({unknown or 'none other'})")

# --- what `spack audit packages` checks without Spack -----------------------------------------
src = open(RECIPE, encoding="utf-8").read()
vt.check(bool((cls.__doc__ or "").strip()), "a docstring (audit: docstring)")
boiler = [p for p in (r"remove this boilerplate", r"FIXME: Put", r"FIXME: Add", r"example.com") if re.search(p, src)]
vt.check(not boiler, f"no boilerplate (audit: no FIXME/example.com) {boiler}")
maint = directive("maintainers")
vt.check(all(re.fullmatch(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})", m) and "maintainer" not in m
             for c in maint for m in c.args),
         f"maintainers are GitHub handles, no placeholder ({[m for c in maint for m in c.args] or 'none declared'})")
versions = directive("version")
vt.check(versions, "at least one version")
for c in versions:
    sha = c.kwargs.get("sha256", "")
    vt.check(re.fullmatch(r"[0-9a-f]{64}", sha) is not None and len(set(sha)) > 1,
             f"version {c.args[0]}: a sha256 checksum (audit: sha256), not a placeholder")
    vt.check(not ({"git", "branch", "commit", "tag"} & set(c.kwargs)), f"version {c.args[0]}: a release tarball, not git")

variants = {c.args[0]: c for c in directive("variant")}
for name, c in variants.items():
    vt.check(bool(c.kwargs.get("description")), f"variant {name}: a description (audit)")
    vt.check(isinstance(c.kwargs.get("default"), bool), f"variant {name}: a boolean default parsable from the command line")
declared = set(variants) | set(spackstub.MESON_PACKAGE_VARIANTS)


def variants_in(spec):
    return set(re.findall(r"[+~]([A-Za-z_][A-Za-z0-9_]*)", re.sub(r"\^\S+", "", spec or "")))


for c in calls:
    if "when" in c.kwargs:
        missing = variants_in(c.kwargs["when"]) - declared
        vt.check(not missing, f"{c!r}: when= names declared variants only (audit) {sorted(missing) or ''}")
deps = [(c.args[0], c.kwargs.get("type", ("build", "link")), c.kwargs.get("when")) for c in directive("depends_on")]
for spec, _, _ in deps:
    vt.check("^" not in spec, f"depends_on({spec!r}): no nested dependency (audit)")
VIRTUALS = {"mpi", "pkgconfig", "c"}
for spec, _, _ in deps:
    name = re.match(r"[a-z0-9-]+", spec).group(0)
    if name in VIRTUALS:
        vt.check(re.fullmatch(r"[a-z0-9-]+(@[\w.:]+)?", spec) is not None, f"virtual {spec!r}: no variants (audit)")


def dep(name):
    return [d for d in deps if re.match(r"[a-z0-9-]+", d[0]).group(0) == name]


# --- the build: tools, MPI, features -----------------------------------------------------------
meson_version = re.search(r"meson_version:\s*'>=\s*([\d.]+)'", read("meson.build")).group(1)
vt.check([d[0] for d in dep("meson")] == [f"meson@{meson_version}:"], f"meson@{meson_version}: (meson.build's meson_version)")
for tool in ("c", "ninja", "pkgconfig"):
    vt.check(any("build" in (t if isinstance(t, tuple) else (t,)) for _, t, _ in dep(tool)), f"build dependency {tool}")
if "find_program('help2man'" in read("install", "meson.build"):
    vt.check([d[1] for d in dep("help2man")] == ["build"], "help2man: a build dependency (install/meson.build makes the manual pages with it)")
mpi = dep("mpi")
vt.check(len(mpi) == 1 and mpi[0][2] == "+mpi" and "run" in mpi[0][1],
         "depends_on('mpi') (the virtual, any provider), build/link/run, when +mpi")
vt.check(variants.get("mpi") is not None and variants["mpi"].kwargs["default"] is True,
         "variant +mpi on by default: a plain `spack install versus` builds the MPI transport")
req = directive("requires")
vt.check(any(set(c.args) == {"^[virtuals=mpi] openmpi", "^[virtuals=mpi] mpich"} and c.kwargs.get("policy") == "one_of"
             and c.kwargs.get("when") == "+mpi" and c.kwargs.get("msg") for c in req),
         "the MPI provider is one the Meson build knows (Open MPI or MPICH), said with a message")

opts = read("meson_options.txt")
options = dict(re.findall(r"option\('([^']+)',\s*type:\s*'(\w+)'", opts))
features = sorted(k for k, t in options.items() if t == "feature")
vt.check(features == sorted(["openmpi", "mpich", "ucx", "ofi", "hwloc"]),
         f"meson_options.txt's features are the MPI flavours, ucx, ofi and hwloc ({features})")
switch = dict((o, v) for v, o in cls._features)          # Meson feature -> variant
vt.check(sorted(switch) == ["hwloc", "ofi", "ucx"], f"a variant for each of ucx, ofi, hwloc ({switch})")
for option, v in switch.items():
    vt.check(v in variants, f"feature {option}: variant +{v}")
    vt.check(any(d[2] == f"+{v}" for d in deps), f"feature {option}: its library is a dependency when +{v}")
vt.check(set(cls._mpi_flavours) == {"openmpi", "mpich"}, "the MPI flavours are meson_options.txt's openmpi and mpich")
vt.check(set(variants) == {"mpi", "parquet"} | set(switch.values()),
         f"no variant without a use ({sorted(variants)})")


def args_for(**kw):
    mpi_name = kw.pop("mpi_provider", None)
    values = {v: True for v in variants}
    values.update(kw)
    spec = spackstub.FakeSpec(values, mpi=mpi_name, python="/spack/opt/python/bin/python3")
    out = cls(spec).meson_args()
    parsed = dict(re.fullmatch(r"-D([\w.]+)=(.*)", a).groups() for a in out)
    return parsed


for provider, other in (("openmpi", "mpich"), ("mpich", "openmpi")):
    a = args_for(mpi_provider=provider)
    vt.check(a[provider] == "enabled" and a[other] == "disabled",
             f"^{provider}: -D{provider}=enabled -D{other}=disabled (the provider found at configure time)")
a = args_for(mpi=False)
vt.check(a["openmpi"] == a["mpich"] == "disabled", "~mpi: both MPI flavours disabled")
try:
    args_for(mpi_provider="intel-oneapi-mpi")
    vt.fail("an MPI provider without a flavour is refused")
except spackstub.InstallError as ex:
    vt.check("intel-oneapi-mpi" in str(ex), f"an MPI provider without a flavour is refused: {ex}")
for option, v in switch.items():
    on, off = args_for(mpi_provider="openmpi", **{v: True}), args_for(mpi_provider="openmpi", **{v: False})
    vt.check(on[option] == "enabled" and off[option] == "disabled", f"+{v}/~{v}: -D{option}=enabled/disabled")
a = args_for(mpi_provider="mpich")
vt.check(set(a) <= set(options), f"meson_args passes only options of meson_options.txt ({sorted(a)})")
vt.check(set(features) <= set(a), "every feature is decided (none left to 'auto' detection of whatever is on the system)")
vt.check(a["python"] == "/spack/opt/python/bin/python3", "-Dpython is the spec's Python (the installed `versus` runs it)")
vt.check(a.get("fault_injection") == "false", "the test-only fault-injection hooks are not built")
env = spackstub.FakeEnv()
cls(spackstub.FakeSpec({v: True for v in variants}, mpi="openmpi")).setup_run_environment(env)
vt.check(("prepend_path", "XDG_DATA_DIRS", "/spack/opt/versus/share") in env.changes,
         "`spack load versus` puts share/ on XDG_DATA_DIRS (bash completion)")

# --- the Python side ---------------------------------------------------------------------------
py = read("reports", "pyproject.toml")


def norm(v):
    parts = [int(x) for x in v.split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return parts


def requirement_list(text):
    return re.findall(r'"([A-Za-z0-9_.-]+)\s*(?:>=\s*([\d.]+))?[^"]*"', text)


required = requirement_list(re.search(r"^dependencies\s*=\s*\[(.*?)\]", py, re.M | re.S).group(1))
extras_block = re.search(r"^\[project\.optional-dependencies\](.*?)(?=^\[|\Z)", py, re.M | re.S)
extras = {}
if extras_block:
    for name, block in re.findall(r"^(\w[\w-]*)\s*=\s*\[(.*?)\]", extras_block.group(1), re.M | re.S):
        if name != "test":
            extras.update(dict(requirement_list(block)))
wanted = dict(required)
wanted.update(extras)
for name, low in sorted(wanted.items()):
    pkg = f"py-{name.lower()}"
    if name.lower() in NOT_IN_SPACK:
        vt.check(not dep(pkg), f"{name}: no Spack package, so not a dependency")
        vt.check(name in read("docs", "install.md"), f"{name}: docs/install.md says what is missing without it")
        continue
    found = dep(pkg)
    vt.check(found, f"{name}: depends_on('{pkg}')")
    vt.check(all("run" in (t if isinstance(t, tuple) else (t,)) for _, t, _ in found), f"{pkg}: a run dependency")
    if low:
        bounds = [re.fullmatch(rf"{pkg}@([\d.]+):", s) for s, _, _ in found]
        vt.check(all(b and norm(b.group(1)) == norm(low) for b in bounds),
                 f"{pkg}: at least {low}, as pyproject.toml asks ({[s for s, _, _ in found]})")
    if name in dict(required) and name.lower() not in ("pyarrow",):
        vt.check(all(w is None for _, _, w in found), f"{pkg}: unconditional (a required dependency)")
pyarrow = dep("py-pyarrow")
vt.check(pyarrow and all(w == "+parquet" for _, _, w in pyarrow), "py-pyarrow (Arrow C++ underneath) only with +parquet")
# versus(1) is made by running `versus --help`, which imports only the standard library
# (tests/python/test_stdlib_only.py): the Python packages are needed at run time only
man = read("install", "meson.build")
vt.check("'import versus.cli'" in man, "versus(1) is made from what `import versus.cli` needs (the standard library)")
for name, _ in required:
    got = dep(f"py-{name.lower()}")
    vt.check(got and all("run" in t for _, t, _ in got), f"py-{name.lower()}: a run dependency")
vt.check(dep("python") and all(set(t) == {"build", "run"} for _, t, _ in dep("python")), "python: build and run")

# --- versions and the release URL scheme ------------------------------------------------------
project_version = re.search(r"project\('versus'.*?version:\s*'([^']+)'", read("meson.build"), re.S).group(1)
listed = [c.args[0] for c in versions]
vt.check(project_version in listed, f"meson.build's version {project_version} is a version of the recipe ({listed})")
vt.check(listed == sorted(listed, key=lambda v: [int(x) for x in v.split(".")], reverse=True), "versions newest first")
releases = module.RELEASES
vt.check(re.match(r"https://[a-z0-9.-]+(/[\w./-]*)?$", releases) is not None and not re.search(r"/(work|tmp|home|root)/", releases),
         f"RELEASES is an https URL, no machine path ({releases})")
inst = cls(spackstub.FakeSpec({}))
for v in listed:
    vt.check(inst.url_for_version(v) == f"{releases}/versus-{v}.tar.gz", f"url_for_version({v}) = RELEASES/versus-{v}.tar.gz")
vt.check(cls.url == inst.url_for_version(listed[0]), f"url is url_for_version of the newest ({cls.url})")

# --- optional: each dependency in a checkout of Spack's builtin packages ----------------------
builtin = os.environ.get("VERSUS_SPACK_PACKAGES")
if builtin:
    candidates = [os.path.join(builtin, "repos", "spack_repo", "builtin", "packages"),
                  os.path.join(builtin, "var", "spack", "repos", "builtin", "packages"), builtin]
    pkgroot = next((p for p in candidates if os.path.isdir(os.path.join(p, "hwloc"))), None)
    vt.check(pkgroot is not None, f"VERSUS_SPACK_PACKAGES={builtin} holds Spack's builtin packages")
    for spec, _, _ in deps:
        name = re.match(r"[a-z0-9-]+", spec).group(0)
        if name in VIRTUALS:
            continue
        d = next((os.path.join(pkgroot, x) for x in (name, name.replace("-", "_")) if os.path.isdir(os.path.join(pkgroot, x))), None)
        vt.check(d is not None, f"{name}: a package of Spack's builtin repository")
        low = re.search(r"@([\d.]+):", spec)
        if low:
            text = open(os.path.join(d, "package.py"), encoding="utf-8").read()
            known = re.findall(r'^\s+version\(\s*"(\d+(?:\.\d+)*)"', text, re.M)
            key = lambda v: [int(x) for x in v.split(".")]  # noqa: E731
            vt.check(any(key(k) >= key(low.group(1)) for k in known),
                     f"{spec}: some version of {name} satisfies it (newest {max(known, key=key) if known else 'none'})")
    for c in directive("requires"):
        for spec in c.args:
            name = spec.split("]")[-1].strip()
            vt.check(os.path.isdir(os.path.join(pkgroot, name)), f"requires {spec!r}: {name} is a package of Spack's builtin repository")
    for name in NOT_IN_SPACK:
        vt.check(not os.path.isdir(os.path.join(pkgroot, f"py_{name}")) and not os.path.isdir(os.path.join(pkgroot, f"py-{name}")),
                 f"py-{name} is still missing from Spack's builtin repository (else make it a dependency)")
else:
    vt.log("not checked: dependencies against Spack's builtin repository (set VERSUS_SPACK_PACKAGES to a checkout)")

# --- optional: Spack's style settings (ruff, line length 99, the package API as builtins) ------
ruff = shutil.which("ruff")
if ruff:
    builtins = sorted(set(spackstub.DIRECTIVES) | {"when", "MesonPackage", "InstallError"})
    cmd = [ruff, "check", "--no-cache", "--isolated", "--line-length", "99", "--extend-select", "E,I,W,F405",
           "--ignore", "E731,F403,F811", "--config", f"builtins = {json.dumps(builtins)}", RECIPE]
    r = subprocess.run(cmd, capture_output=True, text=True)
    vt.check(r.returncode == 0, f"ruff with Spack's settings (and F405: only package API names) finds nothing: {r.stdout.strip()[-800:] or r.stderr.strip()[-400:]}")
    r = subprocess.run([ruff, "format", "--no-cache", "--isolated", "--line-length", "99", "--diff", RECIPE],
                       capture_output=True, text=True)
    vt.check(r.returncode == 0, f"ruff format (Spack's formatter) would change nothing: {r.stdout.strip()[-800:]}")
else:
    vt.log("not checked: Spack's style (ruff, line length 99): ruff is not on PATH")
print("spack recipe: repository layout, directives, audits, Meson features, dependencies and URL scheme match")
