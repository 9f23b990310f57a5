"""The analysis package installed with pip, apart from the Meson install: a wheel built from
reports/ (its templates in it, its version meson.build's) and reports/ itself, each installed
with --no-deps into a fresh virtual environment that sees this interpreter's packages (numpy,
scipy ... through a .pth line, nothing from PyPI). With the wheel, `versus report` on a real shm
run writes the HTML, LaTeX and samples.parquet. With pyarrow and ruptures hidden, the report is
written without samples files and `versus history show` without change points, each saying so
in one line on standard error, exit 0. With the dependencies gone, `versus --help` and every
`versus COMMAND --help` still answer, and a command names what is missing in one line, exit 2.

usage: test_pip_package.py BUILD_DIR
"""
import glob
import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import vstest as vt  # noqa: E402

vt.need_module("shm")
src = os.environ.get("VERSUS_SOURCE_ROOT") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
NEEDED = ["numpy", "scipy", "jinja2", "matplotlib", "plotly", "pyarrow", "ruptures", "pip", "setuptools"]
lacking = [m for m in NEEDED if importlib.util.find_spec(m) is None]
if lacking:
    print(f"SKIP: {sys.executable} lacks {', '.join(lacking)}, which the installed package is tried with "
          "(the suite's environment: python3 -m venv .venv && .venv/bin/pip install -e 'reports[test]')", flush=True)
    sys.exit(vt.SKIP)
# offline (--no-build-isolation), the wheel is built by this interpreter's setuptools: 70.1 or later
# has bdist_wheel of its own (pyproject.toml's build-system and test extra ask for it)
st = importlib.metadata.version("setuptools")
if tuple(int(x) for x in re.findall(r"\d+", st)[:2]) < (70, 1):
    print(f"SKIP: setuptools {st} here builds no wheel without the wheel package; the test extra asks for "
          "setuptools>=70.1: .venv/bin/pip install -e 'reports[test]' (quickstart.sh does)", flush=True)
    sys.exit(vt.SKIP)
t0 = time.monotonic()
tmp = vt.tmpdir()
# nothing may lead back to the source tree's package
env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
env["PYTHONDONTWRITEBYTECODE"] = "1"
env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
env["PIP_NO_INDEX"] = "1"          # --no-deps: nothing is fetched


def sh(cmd, ok=(0,), **kw):
    vt.log("$ " + " ".join(cmd))
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300,
                       stdin=subprocess.DEVNULL, env=kw.pop("env", env), **kw)
    if p.returncode not in ok:
        vt.fail(f"exit {p.returncode}: {' '.join(cmd)}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return p


# the package's sources, copied: a build writes build/ and *.egg-info beside pyproject.toml
pkg = os.path.join(tmp, "reports")
shutil.copytree(os.path.join(src, "reports"), pkg,
                ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist"))
# this interpreter's packages (site-packages, where numpy ... are)
have = sysconfig.get_paths()["purelib"]


def venv(name, hide=()):
    """A fresh environment (no pip of its own) that sees this interpreter's packages after its own,
    with the modules `hide` made unimportable."""
    d = os.path.join(tmp, name)
    sh([sys.executable, "-m", "venv", "--without-pip", d])
    (site,) = glob.glob(os.path.join(d, "lib", "python*", "site-packages"))
    with open(os.path.join(site, "zz_versus_test_deps.pth"), "w") as f:
        f.write(have + "\n")
    if hide:
        with open(os.path.join(site, "versus_test_hide.py"), "w") as f:
            f.write(f"""import sys
HIDDEN = {sorted(hide)!r}
class Hide:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {{name!r}} (hidden by the test)", name=name)
sys.meta_path.insert(0, Hide())
""")
        with open(os.path.join(site, "versus_test_hide.pth"), "w") as f:
            f.write("import versus_test_hide\n")
    return d, site


def meson_version():
    text = open(os.path.join(src, "meson.build"), encoding="utf-8").read()
    return re.search(r"project\('versus'.*?version:\s*'([^']+)'", text, re.S).group(1)


# --- the wheel: built from reports/, installed alone
full, full_site = venv("full")
py = os.path.join(full, "bin", "python")
wheels = os.path.join(tmp, "wheels")
sh([py, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", wheels, pkg])
(wheel,) = glob.glob(os.path.join(wheels, "versus-*.whl"))
version = meson_version()
vt.check(os.path.basename(wheel).startswith(f"versus-{version}-"),
         f"the wheel's version is meson.build's ({os.path.basename(wheel)}, {version})")
names = set(zipfile.ZipFile(wheel).namelist())
templates = sorted(os.path.relpath(p, os.path.join(src, "reports"))
                   for p in glob.glob(os.path.join(src, "reports", "versus", "templates", "**", "*"), recursive=True)
                   if os.path.isfile(p))
vt.check(templates and all(t in names for t in templates),
         f"the wheel holds every template ({len(templates)}: {[t for t in templates if t not in names] or 'all'})")
meta = zipfile.ZipFile(wheel).read(f"versus-{version}.dist-info/METADATA").decode()
vt.check("Provides-Extra: parquet" in meta and "Provides-Extra: changepoints" in meta
         and re.search(r"Requires-Dist: pyarrow.*extra == .parquet.", meta)
         and re.search(r"Requires-Dist: ruptures.*extra == .changepoints.", meta)
         and re.search(r"^Requires-Dist: numpy", meta, re.M),
         "the wheel's metadata: numpy needed, pyarrow in the extra parquet, ruptures in changepoints")
sh([py, "-m", "pip", "install", "--no-deps", "-q", wheel])
versus = os.path.join(full, "bin", "versus")
where = sh([py, "-c", "import versus; print(versus.__file__)"]).stdout.strip()
vt.check(where.startswith(os.path.realpath(full_site)) or where.startswith(full_site),
         f"the environment imports the installed package ({where})")
p = sh([versus, "--version"])
vt.check(p.stdout.strip() == f"versus {version}", f"versus --version: {p.stdout.strip()}")
vt.log(f"[{time.monotonic() - t0:.1f} s] wheel built and installed")

# --- real runs to report on: six of the same configuration (a history long enough for change points)
runs = []
for k in range(6):
    out = os.path.join(tmp, f"shm-{k}.jsonl")
    sh([vt.RUNNER, "-t", "shm", "--launch", "local", "-n", "2", "-s", "8,1K", "-i", "200", "-w", "20",
        "--out", out, "--quiet"])
    runs.append(out)
report = os.path.join(tmp, "report-full")
p = sh([versus, "report", runs[0], "-o", report])
vt.check(os.path.exists(os.path.join(report, "index.html")) and os.path.exists(os.path.join(report, "report.tex")),
         "versus report (wheel install): index.html and report.tex")
vt.check(os.path.getsize(os.path.join(report, "samples.parquet")) > 0 and "is not installed" not in p.stderr,
         "versus report (wheel install): samples.parquet, nothing said missing")
vt.log(f"[{time.monotonic() - t0:.1f} s] report made")

# --- the source tree installed, pyarrow and ruptures hidden
part, _ = venv("partial", hide=("pyarrow", "ruptures"))
ppy = os.path.join(part, "bin", "python")
sh([ppy, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "-q", pkg])
p = sh([ppy, "-c", "import pyarrow"], ok=(1,))
vt.check("hidden by the test" in p.stderr, "pyarrow is hidden in the second environment")
pversus = os.path.join(part, "bin", "versus")
db = os.path.join(tmp, "history.sqlite")
sh([pversus, "history", "add", *runs, "--db", db])
report = os.path.join(tmp, "report-partial")
p = sh([pversus, "report", runs[0], "-o", report, "--history", db])
said = [ln for ln in p.stderr.splitlines() if "is not installed" in ln]
vt.check(len(said) == 2 and "Traceback" not in p.stderr, f"report without pyarrow and ruptures: one line each ({said})")
vt.check(said[0].startswith("versus report: pyarrow is not installed") and "pip install 'versus[parquet]'" in said[0]
         and "samples.parquet" in said[0], f"it says what is missing, what it costs and how to install it ({said[0]})")
vt.check("pip install 'versus[changepoints]'" in said[1], f"and for ruptures ({said[1]})")
html = open(os.path.join(report, "index.html"), encoding="utf-8").read()
vt.check(not glob.glob(os.path.join(report, "samples.*")) and "Change points not looked for" in html,
         "the report is written without samples files; its history page says change points were not looked for")
p = sh([pversus, "history", "show", "--db", db])
said = [ln for ln in p.stderr.splitlines() if ln.strip()]
vt.check(len(said) == 1 and said[0].startswith("versus history: ruptures is not installed")
         and "pip install 'versus[changepoints]'" in said[0], f"history show without ruptures: one line ({said})")
vt.check("change points not looked for" in p.stdout and len(re.findall(r"^  \d{4}-", p.stdout, re.M)) == 6,
         "history show lists the six runs and says change points were not looked for")
vt.log(f"[{time.monotonic() - t0:.1f} s] without the extras")

# --- the dependencies gone (the wheel's environment without its .pth line)
os.remove(os.path.join(full_site, "zz_versus_test_deps.pth"))
p = sh([py, "-c", "import numpy"], ok=(1,))
vt.check("No module named 'numpy'" in p.stderr, "numpy is gone from the first environment")
commands = re.findall(r"^    ([a-z][a-z-]*)(?:\s|$)", sh([versus, "--help"]).stdout, re.M)
vt.check(len(commands) >= 10 and "scan-report" in commands, f"versus --help lists the commands ({commands})")
for c in commands:
    p = sh([versus, c, "--help"])
    vt.check(p.stdout.startswith(f"usage: versus {c}"), f"versus {c} --help without numpy")
p = sh([versus, "summary", runs[0]], ok=(2,))
lines = p.stderr.strip().splitlines()
vt.check(len(lines) == 1 and lines[0].startswith("versus summary: numpy cannot be imported"),
         f"a command without numpy: one line, exit 2 ({p.stderr.strip()[:300]})")
print(f"pip package: wheel and source tree install, report, extras hidden, --help without numpy "
      f"({time.monotonic() - t0:.1f} s)")
