"""Shared helpers of the report and campaign tests: run `versus` as a
subprocess (with a timeout), render the example results, drive headless
Chromium and pdflatex.  Missing browser or TeX is a failure, not a skip:
quickstart.sh installs both."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
from vstest import check, fail, log, run_cmd  # noqa: E402,F401

DATA = os.path.join(HERE, "data")
EXAMPLE = os.path.join(DATA, "example")


def tmpdir():
    return tempfile.mkdtemp(prefix="versus-report-test-")


def versus(args, timeout=600, env=None, check_rc=0):
    """Run `python -m versus ARGS`; fail on a hang or an unexpected exit code."""
    return run_cmd([sys.executable, "-m", "versus", *args], timeout, env, check_rc)


def need_tool(name):
    path = shutil.which(name)
    if not path:
        fail(f"'{name}' is not installed (quickstart.sh installs it; the render tests must not skip)")
    return path


def chromium(args, timeout=120):
    exe = need_tool("chromium")
    profile = tempfile.mkdtemp(prefix="versus-chromium-")
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run",
           f"--user-data-dir={profile}", *args]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        fail(f"chromium did not finish within {timeout} s")
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    return p


def pdflatex(directory, timeout=180, name="report"):
    """Compile DIR/NAME.tex (report or appendix) twice; returns the PDF's path."""
    exe = need_tool("pdflatex")
    for _ in range(2):          # twice: longtable widths settle on the second pass
        try:
            p = subprocess.run([exe, "-interaction=nonstopmode", "-halt-on-error", f"{name}.tex"],
                               cwd=directory, capture_output=True, text=True, timeout=timeout,
                               stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            fail(f"pdflatex did not finish within {timeout} s")
        if p.returncode != 0:
            errors = [ln for ln in p.stdout.splitlines() if ln.startswith("!")]
            fail(f"pdflatex failed (exit {p.returncode}): {errors[:5]}\n{p.stdout[-3000:]}")
    pdf = os.path.join(directory, f"{name}.pdf")
    check(os.path.getsize(pdf) > 1000, f"pdflatex produced {name}.pdf")
    return pdf


def overfull(directory, name="report"):
    """The widths (pt) of the overfull horizontal boxes pdflatex reported in DIR/NAME.log: a line
    or table running that far past the margin."""
    with open(os.path.join(directory, f"{name}.log"), encoding="latin-1") as f:
        return [float(w) for w in re.findall(r"Overfull \\hbox \(([0-9.]+)pt too wide\)", f.read())]


def pages(pdf):
    p = subprocess.run([need_tool("pdfinfo"), pdf], capture_output=True, text=True, timeout=60)
    m = re.search(r"^Pages:\s+(\d+)", p.stdout, re.M)
    check(p.returncode == 0 and m is not None, f"pdfinfo reads {os.path.basename(pdf)}")
    return int(m.group(1))


def pdftotext(pdf):
    exe = need_tool("pdftotext")
    p = subprocess.run([exe, "-layout", pdf, "-"], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, "pdftotext reads the PDF")
    return p.stdout
