"""The Spack recipe against the tarball it names: configure versus the way Spack's
MesonPackage would (its standard arguments plus the recipe's meson_args for what this machine
has), make the release tarball from that build with `meson dist --no-tests --formats gztar`,
check that the recipe's URL scheme names that file, and that contrib/spack/update_checksum.py
records the tarball's sha256 in (a copy of) the recipe, adds a new version above the others,
and refuses a tarball whose name, top directory or meson.build disagree (or that is no tarball), with exit 2 and one
line.  Needs git (a checkout), meson and pkg-config; exits 77 without them."""
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, HERE)
import spackstub  # noqa: E402
import vstest as vt  # noqa: E402

ROOT = os.path.abspath(os.environ.get("VERSUS_SOURCE_ROOT") or os.path.join(HERE, "..", ".."))
RECIPE = os.path.join(ROOT, "contrib", "spack", "packages", "versus", "package.py")
UPDATE = os.path.join(ROOT, "contrib", "spack", "update_checksum.py")


def skip(why):
    print(f"SKIP: {why}", flush=True)
    sys.exit(vt.SKIP)


meson = shutil.which("meson") or skip("meson is not on PATH")
shutil.which("git") or skip("git is not on PATH")
shutil.which("pkg-config") or skip("pkg-config is not on PATH")
if subprocess.run(["git", "-C", ROOT, "ls-files", "--error-unmatch", "meson.build"], capture_output=True).returncode:
    skip("the source is not a git checkout: meson dist makes the tarball from git")

module, calls = spackstub.load(RECIPE)
cls = module.Versus
variants = [c.args[0] for c in calls if c.name == "variant"]
project_version = re.search(r"project\('versus'.*?version:\s*'([^']+)'",
                            open(os.path.join(ROOT, "meson.build"), encoding="utf-8").read(), re.S).group(1)


def have(pc):
    return subprocess.run(["pkg-config", "--exists", pc]).returncode == 0


# the spec Spack would concretize here: the MPI found, each library variant on if present
provider = "openmpi" if have("ompi-c") else "mpich" if have("mpich") else None
values = {v: True for v in variants}
values.update(mpi=provider is not None, ucx=have("ucx"), libfabric=have("libfabric"), hwloc=have("hwloc"))
spec = spackstub.FakeSpec(values, mpi=provider, python=sys.executable)
work = vt.tmpdir()
prefix = os.path.join(work, "prefix")
# MesonPackage's standard arguments (Spack's build_systems/meson.py, std_args)
std = [f"-Dprefix={prefix}", f"-Dlibdir={os.path.join(prefix, 'lib')}", "-Dbuildtype=release", "-Dstrip=false",
       "-Ddefault_library=shared", "-Dwrap_mode=nodownload"]
args = std + cls(spec, prefix).meson_args()
vt.log(f"spec here: {' '.join(('+' if on else '~') + v for v, on in sorted(values.items()))}"
       f"{' ^' + provider if provider else ''}")
build = os.path.join(work, "build")
r = subprocess.run([meson, "setup", build, ROOT] + args, capture_output=True, text=True, timeout=300)
vt.check(r.returncode == 0, f"meson setup with Spack's arguments and the recipe's meson_args configures "
                            f"({' '.join(args[6:])}){'' if r.returncode == 0 else ': ' + (r.stdout + r.stderr)[-1500:]}")
built = dict(re.findall(r"^\s+(\w+)\s*: (built|skipped)", r.stdout, re.M))
for flavour in cls._mpi_flavours:
    want = "built" if flavour == provider else "skipped"
    vt.check(built.get(flavour) == want, f"MPI transport {flavour}: {built.get(flavour)} (the spec's MPI is {provider})")
for variant, option in cls._features:
    if option in ("ucx", "ofi"):
        want = "built" if values[variant] else "skipped"
        vt.check(built.get(option) == want, f"transport {option}: {built.get(option)} (+{variant} is {values[variant]})")
intro = subprocess.run([meson, "introspect", "--buildoptions", build], capture_output=True, text=True)
opts = {o["name"]: o["value"] for o in json.loads(intro.stdout)}
vt.check(opts["libdir"] == "lib", f"Spack's absolute libdir ends up inside the prefix ({opts['libdir']}): the install stays relocatable")
for a in args[6:]:
    name, value = re.fullmatch(r"-D([\w.]+)=(.*)", a).groups()
    got = opts.get(name)
    got = {True: "true", False: "false"}.get(got, got)
    vt.check(str(got) == value, f"-D{name}={value} taken ({got})")

r = subprocess.run([meson, "dist", "-C", build, "--no-tests", "--formats", "gztar", "--allow-dirty"],
                   capture_output=True, text=True, timeout=300)
vt.check(r.returncode == 0, f"meson dist --no-tests --formats gztar{'' if r.returncode == 0 else ': ' + (r.stdout + r.stderr)[-800:]}")
dist = os.path.join(build, "meson-dist")
made = sorted(f for f in os.listdir(dist) if f.endswith(".tar.gz"))
url = cls(spec).url_for_version(project_version)
vt.check(made == [os.path.basename(url)], f"meson dist made {made}; the recipe fetches {url}")
tarball = os.path.join(dist, made[0])
sha = hashlib.sha256(open(tarball, "rb").read()).hexdigest()
with tarfile.open(tarball) as t:
    members = set(t.getnames())
top = f"versus-{project_version}"
vt.check({f"{top}/contrib/spack/repo.yaml", f"{top}/contrib/spack/packages/versus/package.py",
          f"{top}/contrib/spack/update_checksum.py"} <= members, "the tarball carries the Spack repository and the script")


def update(tar, recipe):
    return subprocess.run([sys.executable, UPDATE, tar, "--recipe", recipe], capture_output=True, text=True, timeout=60)


def recorded(recipe):
    _, c = spackstub.load(recipe)
    return [(x.args[0], x.kwargs.get("sha256")) for x in c if x.name == "version"]


copy = os.path.join(work, "package.py")
shutil.copy(RECIPE, copy)
r = update(tarball, copy)
vt.check(r.returncode == 0 and project_version in r.stdout, f"update_checksum.py records the tarball: {r.stdout.strip()}")
vt.check((project_version, sha) in recorded(copy), f"the recipe's {project_version} now has the tarball's sha256 {sha[:12]}...")
before = open(copy, encoding="utf-8").read()
r = update(tarball, copy)
vt.check(r.returncode == 0 and "already" in r.stdout and open(copy, encoding="utf-8").read() == before,
         f"run again, nothing changes: {r.stdout.strip()}")

def craft(name, top, version):
    """A tarball with the layout meson dist gives: top/meson.build declaring version."""
    path = os.path.join(work, name)
    with tarfile.open(path, "w:gz") as t:
        data = f"project('versus', 'c',\n  version: '{version}',\n  license: 'BSD-3-Clause')\n".encode()
        info = tarfile.TarInfo(f"{top}/meson.build")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    return path


# a new release: a tarball of version 0.99.0
newer = craft("versus-0.99.0.tar.gz", "versus-0.99.0", "0.99.0")
r = update(newer, copy)
new_sha = hashlib.sha256(open(newer, "rb").read()).hexdigest()
vt.check(r.returncode == 0 and "added" in r.stdout, f"a new version is added: {r.stdout.strip()}")
vt.check(recorded(copy)[:2] == [("0.99.0", new_sha), (project_version, sha)], f"newest first: {recorded(copy)[:2]}")
vt.check(cls(spec).url_for_version("0.99.0").endswith("/versus-0.99.0.tar.gz"), "and its URL follows the scheme")

# bad input: exit 2, one line, the recipe untouched
before = open(copy, encoding="utf-8").read()
renamed = os.path.join(work, "versus-9.9.9.tar.gz")
shutil.copy(tarball, renamed)
wrongname = os.path.join(work, "versus.tgz")
shutil.copy(tarball, wrongname)
garbage = os.path.join(work, "versus-1.0.0.tar.gz")
with open(garbage, "w") as f:
    f.write("not a tarball\n")
outside = craft("versus-1.1.0.tar.gz", "elsewhere", "1.1.0")
mismatched = craft("versus-1.2.0.tar.gz", "versus-1.2.0", "1.1.0")
for path, says in ((os.path.join(work, "missing-1.0.tar.gz"), "no such file"), (wrongname, "not a release tarball name"),
                   (renamed, "is not under versus-9.9.9/"), (garbage, "not a readable"), (outside, "not under"),
                   (mismatched, "says version 1.1.0")):
    r = update(path, copy)
    vt.check(r.returncode == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1
             and "Traceback" not in r.stderr, f"{os.path.basename(path)}: exit 2, {r.stderr.strip()}")
vt.check(open(copy, encoding="utf-8").read() == before, "the recipe is untouched by refused tarballs")
r = update(tarball, os.path.join(work, "nowhere", "package.py"))
vt.check(r.returncode == 2 and "cannot read the recipe" in r.stderr, f"a missing recipe: exit 2, {r.stderr.strip()}")
shutil.rmtree(work, ignore_errors=True)
print(f"spack dist: {made[0]} ({sha}) is what the recipe fetches; update_checksum.py records it")
