"""EasyBuild builds versus as a site would: `meson dist` makes the source tarball, EasyBuild
(installed from PyPI into a throwaway virtual environment) builds it with the easyconfig of
contrib/easybuild and the stock MesonNinja easyblock into a temporary prefix, and Lmod loads
the module EasyBuild wrote.  From that module alone: all six transports load from the
prefix, a local shm run, `versus summary` of it, both manual pages through MANPATH (with
their ENVIRONMENT and EXIT STATUS sections), bash completion through XDG_DATA_DIRS (and not
without it), the transport SDK through PKG_CONFIG_PATH.  Everything is made under one
temporary directory, removed at the end whether the test passed or not.

Needs Lmod, bash-completion, git (meson dist) and PyPI; exits 77 naming what is missing.
usage: test_easybuild.py BUILD_DIR
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import vstest as vt  # noqa: E402

EASYBUILD = "5.4.1"          # easybuild-framework and easybuild-easyblocks
TRANSPORTS = ("openmpi", "mpich", "ucx", "ofi", "shm", "tcp")
LMOD_INIT = ("/usr/share/lmod/lmod/init/bash",)
BASH_COMPLETION = "/usr/share/bash-completion/bash_completion"

build = os.path.realpath(sys.argv[1])
src = os.path.realpath(os.environ.get("VERSUS_SOURCE_ROOT")
                       or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def skip(why):
    print(f"SKIP: {why}", flush=True)
    sys.exit(vt.SKIP)


# --- what the test needs, before anything is made
lmod_init = next((p for p in ((os.environ.get("LMOD_PKG", "") + "/init/bash",) + LMOD_INIT) if os.path.isfile(p)),
                 None)
if not lmod_init:
    skip("Lmod is not installed (apt install lmod)")
if not os.path.isfile(BASH_COMPLETION):
    skip("bash-completion is not installed (apt install bash-completion)")
for prog in ("git", "meson", "ninja", "man"):
    vt.need_program(prog)
if not os.path.isdir(os.path.join(src, ".git")) and not os.path.isfile(os.path.join(src, ".git")):
    skip(f"{src} is not a git checkout: meson dist makes the tarball from git")
missing = [t for t in TRANSPORTS if t not in vt.BUILT]
if missing:
    skip(f"the easyconfig builds all six transports; not built here: {', '.join(missing)}")

# a clean environment: nothing may point back into the source or build tree
env = {k: v for k, v in os.environ.items()
       if k not in ("VERSUS_MODULE_PATH", "PYTHONPATH", "LD_LIBRARY_PATH", "VERSUS_RUN", "MODULEPATH",
                    "LOADEDMODULES", "_LMFILES_", "XDG_DATA_DIRS", "MANPATH", "PKG_CONFIG_PATH")
       and not k.startswith(("EASYBUILD_", "EBROOT", "EBVERSION", "__LMOD", "LMOD_", "BASH_COMPLETION"))}


def sh(cmd, ok=(0,), timeout=300, **kw):
    """Run cmd in its own process group (killed as a whole on a timeout or when the test is
    ended), log it; fail unless it exits with one of ok.  Returns (rc, output)."""
    vt.log("$ " + (cmd if isinstance(cmd, str) else " ".join(cmd)))
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL,
                         env=kw.pop("env", env), start_new_session=True, **kw)
    try:
        out, _ = p.communicate(timeout=timeout)
    except BaseException:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        raise
    if p.returncode not in ok:
        vt.fail(f"exit {p.returncode}: {cmd if isinstance(cmd, str) else ' '.join(cmd)}\n{out[-4000:]}")
    return p.returncode, out


def version_of(prog):
    return sh([prog, "--version"])[1].strip().split()[-1]


def make_tarball(tmp):
    """meson dist of the checkout's HEAD, from a build directory of its own."""
    info = json.loads(sh(["meson", "introspect", "--projectinfo", build])[1])
    version = info["version"]
    dist = os.path.join(tmp, "dist-build")
    sh(["meson", "setup", dist, src])
    if sh(["git", "-C", src, "status", "--porcelain", "--untracked-files=no"])[1].strip():
        vt.log("note: the checkout has uncommitted changes; the tarball holds the last commit (HEAD)")
    sh(["meson", "dist", "-C", dist, "--no-tests", "--formats", "gztar", "--allow-dirty"])
    tarball = os.path.join(dist, "meson-dist", f"versus-{version}.tar.gz")
    vt.check(os.path.isfile(tarball), f"meson dist made versus-{version}.tar.gz")
    sources = os.path.join(tmp, "sources", "v", "versus")     # EasyBuild's layout under --sourcepath
    os.makedirs(sources)
    shutil.move(tarball, sources)
    shutil.rmtree(dist)
    return version, os.path.join(tmp, "sources")


def install_easybuild(tmp):
    venv = os.path.join(tmp, "ebvenv")
    sh([sys.executable, "-m", "venv", venv])
    rc, out = sh([os.path.join(venv, "bin", "pip"), "install", "--no-cache-dir", "--disable-pip-version-check",
                  "--quiet", f"easybuild-framework=={EASYBUILD}", f"easybuild-easyblocks=={EASYBUILD}"],
                 ok=range(256), timeout=400)
    if rc:
        if re.search(r"NewConnectionError|Temporary failure in name resolution|Network is unreachable|"
                     r"from versions: none\)|Could not fetch URL|ConnectTimeout|ProxyError", out):
            skip(f"PyPI is not reachable, EasyBuild cannot be installed:\n{out[-1500:]}")
        vt.fail(f"pip install of EasyBuild {EASYBUILD} failed:\n{out[-4000:]}")
    return os.path.join(venv, "bin", "eb")


def run_eb(tmp, eb, easyconfig, sourcepath, pydir):
    prefix = os.path.join(tmp, "prefix")
    ebenv = dict(env, HOME=os.path.join(tmp, "home"),
                 EB_PYTHON=os.path.join(os.path.dirname(eb), "python"),   # eb's own interpreter: the venv's
                 LMOD_CMD=os.path.join(os.path.dirname(os.path.dirname(lmod_init)), "libexec", "lmod"),
                 # the system's Meson and Ninja stand in for modules (--filter-deps below); the MesonNinja
                 # easyblock reads Meson's version where a Meson module would have put it
                 EBVERSIONMESON=version_of("meson"),
                 # `-Dpython=python3`: a Python with the analysis stack first on PATH, as a site's module gives
                 PATH=pydir + os.pathsep + env.get("PATH", ""))
    os.makedirs(ebenv["HOME"])
    cmd = [eb, easyconfig, f"--sourcepath={sourcepath}", f"--installpath={prefix}",
           f"--buildpath={os.path.join(tmp, 'eb-build')}", f"--repositorypath={os.path.join(tmp, 'eb-repo')}",
           f"--tmpdir={os.path.join(tmp, 'eb-tmp')}", f"--tmp-logdir={os.path.join(tmp, 'eb-logs')}",
           "--module-syntax=Lua", "--modules-tool=Lmod", "--filter-deps=Meson,Ninja", "--trace"]
    if os.geteuid() == 0:
        cmd.append("--allow-use-as-root-and-accept-consequences")
    t0 = time.monotonic()
    rc, out = sh(cmd, ok=range(256), timeout=900, env=ebenv)
    took = time.monotonic() - t0
    if rc:
        logs = [os.path.join(r, f) for r, _, fs in os.walk(os.path.join(tmp, "eb-logs")) for f in fs]
        tail = "".join(open(p, errors="replace").read()[-6000:] for p in logs[-1:])
        vt.fail(f"eb exited {rc}\n{out[-4000:]}\n--- the EasyBuild log's end\n{tail}")
    vt.log(out[-8000:])
    vt.log(f"eb built and installed versus in {took:.0f} s")
    return prefix


def in_module(tmp, prefix, pydir, script):
    """bash: Lmod initialised, the module loaded, a Python with the analysis stack on PATH."""
    text = (f"set -e\nsource '{lmod_init}'\nmodule use '{prefix}/modules/all'\nmodule load versus\n"
            f"export PATH='{pydir}':\"$PATH\"\ncd '{tmp}/run'\n" + script)
    return sh(["bash", "-c", text], env=dict(env, HOME=os.path.join(tmp, "home")), timeout=300)[1]


def check_module(tmp, prefix, pydir):
    os.makedirs(os.path.join(tmp, "run"))
    out = in_module(tmp, prefix, pydir, "for v in PATH MANPATH XDG_DATA_DIRS PKG_CONFIG_PATH CPATH; do "
                                        "printf '%s=%s\\n' \"$v\" \"${!v:-}\"; done\n")
    seen = dict(ln.split("=", 1) for ln in out.splitlines() if "=" in ln)
    real = os.path.realpath(prefix)
    for var, sub in (("PATH", "bin"), ("MANPATH", "share/man"), ("XDG_DATA_DIRS", "share"),
                     ("PKG_CONFIG_PATH", "lib/pkgconfig"), ("CPATH", "include")):
        dirs = [os.path.realpath(d) for d in seen.get(var, "").split(":") if d]
        vt.check(any(d.startswith(real) and d.endswith(sub) for d in dirs),
                 f"module load versus puts the prefix's {sub} on {var} ({seen.get(var)})")

    out = in_module(tmp, prefix, pydir, "command -v versus-run\nversus-run --list --json\n")
    where, listing = out.split("\n", 1)
    vt.check(os.path.realpath(where).startswith(real), f"versus-run is the module's ({where})")
    mods = {m["name"]: m for m in json.loads(listing)}
    for t in TRANSPORTS:
        path = os.path.realpath(mods.get(t, {}).get("path", ""))
        vt.check(mods.get(t, {}).get("loads") and path.startswith(real), f"{t} loads from the prefix ({path})")

    out = in_module(tmp, prefix, pydir, "versus-run --launch local -n 2 -t shm -s 8,1K -O x.jsonl\n"
                                        "echo '--- summary'\nversus summary x.jsonl\n")
    _, sizes, end = vt.read_jsonl(os.path.join(tmp, "run", "x.jsonl"))
    vt.check([s["bytes"] for s in sizes] == [8, 1024] and end.get("status") == "ok",
             "versus-run from the module measured 8 B and 1 KiB over shm (end record ok)")
    summary = out.split("--- summary", 1)[1]
    vt.check("shm" in summary and "x.jsonl" in summary and "status ok" in summary,
             f"versus summary of the run ({summary.strip()[:300]})")

    out = in_module(tmp, prefix, pydir, "man -w versus-run\nman -w versus\n"
                                        "MANWIDTH=100 MAN_KEEP_FORMATTING=0 PAGER=cat man versus-run\n")
    out = re.sub(r".\x08", "", out)
    pages = out.splitlines()[:2]
    for page, name in zip(pages, ("versus-run", "versus")):
        vt.check(os.path.realpath(page).startswith(real) and page.endswith(f"/share/man/man1/{name}.1"),
                 f"man -w {name} finds the module's page ({page})")
    for word in ("ENVIRONMENT", "VERSUS_MODULE_PATH", "EXIT STATUS", "FILES", "EXAMPLES", "SEE ALSO"):
        vt.check(word in out, f"man versus-run renders and holds {word}")

    out = in_module(tmp, prefix, pydir, "pkg-config --variable=transport_abi versus-transport\n"
                                        "pkg-config --cflags versus-transport\n")
    abi, cflags = out.splitlines()[:2]
    vt.check(abi.isdigit() and os.path.realpath(cflags.strip()[2:]).startswith(real),
             f"pkg-config finds versus-transport.pc through the module (abi {abi}, {cflags.strip()})")

    # bash completion: found through XDG_DATA_DIRS alone (the prefix's bin taken off PATH), and
    # not found once XDG_DATA_DIRS names another directory (not unset: its default, /usr/local/share,
    # may hold a versus installed there)
    probe = (f"source '{BASH_COMPLETION}'\n"
             f"PATH=$(tr ':' '\\n' <<<\"$PATH\" | grep -v '^{prefix}/' | paste -sd:)\n"
             "UNSET\nif __load_completion versus-run; then complete -p versus-run versus; else echo 'not found'; fi\n")
    out = in_module(tmp, prefix, pydir, probe.replace("UNSET", ""))
    vt.check("complete -F _versus_run versus-run" in out and "complete -F _versus versus" in out,
             f"bash-completion loads versus-run's completion through XDG_DATA_DIRS ({out.strip()})")
    out = in_module(tmp, prefix, pydir, probe.replace("UNSET", f"export XDG_DATA_DIRS='{tmp}/run'"))
    vt.check("not found" in out, "with another XDG_DATA_DIRS, bash-completion does not find it")


tmp = tempfile.mkdtemp(prefix="versus-eb-")
took = {}
t = time.monotonic()
try:
    version, sourcepath = make_tarball(tmp)
    easyconfig = os.path.join(src, "contrib", "easybuild", f"versus-{version}.eb")
    vt.check(os.path.isfile(easyconfig), f"contrib/easybuild has an easyconfig for version {version}")
    took["tarball"], t = time.monotonic() - t, time.monotonic()
    eb = install_easybuild(tmp)
    took["EasyBuild from PyPI"], t = time.monotonic() - t, time.monotonic()
    pydir = os.path.dirname(sys.executable)
    prefix = run_eb(tmp, eb, easyconfig, sourcepath, pydir)
    took["eb"], t = time.monotonic() - t, time.monotonic()
    lua = os.path.join(prefix, "modules", "all", "versus", f"{version}.lua")
    vt.check(os.path.isfile(lua), f"EasyBuild wrote the Lua module versus/{version}")
    vt.log("".join(ln for ln in open(lua) if ln.startswith(("prepend_path", "setenv", "local root"))))
    check_module(tmp, prefix, pydir)
    took["module checks"] = time.monotonic() - t
finally:
    shutil.rmtree(tmp, ignore_errors=True)
    if os.path.exists(tmp):
        subprocess.run(["chmod", "-R", "u+w", tmp], check=False)
        shutil.rmtree(tmp, ignore_errors=True)
print(f"easybuild: tarball, EasyBuild {EASYBUILD}, build and install, Lmod module: run, summary, man, completion, "
      f"SDK ({', '.join(f'{k} {v:.0f} s' for k, v in took.items())})")
