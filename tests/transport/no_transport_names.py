#!/usr/bin/env python3
"""Nothing outside transports/ names a transport, except the places listed here.

A transport is one folder under transports/ and one Meson line: core, the analysis
package and every suite that tests what all modules promise ask the modules what they
declare (`versus-run --list --json`, the vs_backends declarations) instead of keeping
lists of names.  This reads the source tree and fails on any word that is a declared
module's name (VERSUS_DECLARED_MODULES) in a file that is not in one of the places
below, each with the reason it may name one.

usage: no_transport_names.py [SOURCE_ROOT]   (default: VERSUS_SOURCE_ROOT)
"""
import os
import re
import subprocess
import sys

# Folders and files (relative to the source root; a trailing / is a folder) that may name
# transports, and why.  A module's own test folder (its 'tests' key) is added from its
# declaration.
AREAS = {
    "transports/": "the modules and their declarations",
    "meson_options.txt": "a module's feature option (`get_option()` in its own meson.build) must be declared here",
    "README.md": "prose: the transports there are, what each measured",
    "docs/": "prose: the transports there are, what each measured",
    "tools/versus-run.h2m": "the man page's examples",
    "tools/versus.h2m": "the man page's examples",
    "configs/": "campaigns a user runs: they name what to measure",
    "bench/": "each script sets one module beside its library's own tool",
    "quickstart.sh": "the Debian packages of the libraries the modules need",
    "contrib/spack/": "packaging recipes: the variants and files of the modules they build",
    "contrib/easybuild/": "packaging recipes: the variants and files of the modules they build",
    "contrib/reframe/": "ReFrame checks: the parameters of the installed modules a site runs",
    "tests/corpus/": "recorded runs and command lines: data that names the module that made it",
    "tests/python/": "tests of the analysis over records that name the module that made them",
    "tests/reports/": "tests of reports over records that name the module that made them",
    "tests/groundtruth/": "thresholds of one library each, set and then detected",
    "tests/lab/": "measurements over the emulated network of chosen modules",
    "tests/slurm/": "ReFrame's srun variants of chosen modules in a private Slurm",
    "tests/install/": "what an installation holds: the modules it built",
    "tests/methodology/": "method tests driven by a chosen module",
    "tests/fuzz/": "command lines made from a chosen module",
    "tests/sanitizer/": "leak suppressions, each for one library",
    "tests/core/": "core's own tests, driven by chosen modules, and test_all_backends' look at libfabric's providers",
    "tests/transport/no_transport_names.py": "this list",
}

# Single lines elsewhere that may, and why: (file, text on the line).
LINES = [
    ("core/options.c", "provider=tcp", "--help's example of a module option"),
    ("core/options_help.c", "transports are started by their own launcher", "--help's MPI example"),
    ("core/options_help.c", "versus-run --transport ", "--help's MPI example"),
    ("core/launch_tcp.c", '.name = "tcp"', "the TCP rendezvous bootstrap's own name, not a transport"),
    ("core/launch_tcp.c", "<netinet/tcp.h>", "the system's TCP header"),
    ("core/include/versus/bootstrap.h", '"mpi", "tcp", "threads"', "bootstrap names, not transports"),
    ("reports/versus/report.py", "TRANSPORTS = {", "which module an imported tool's figures are set beside"),
    ("reports/versus/report.py", '"NPmpich": ("mpich",)}', "which module an imported tool's figures are set beside"),
    ("reports/versus/report.py", '"fi_pingpong": ("ofi",)}', "which module an imported tool's figures are set beside"),
    ("reports/versus/report.py", "ucx_perftest: ucx; fi_pingpong: ofi", "which module an imported tool's figures are set beside"),
    ("reports/versus/campaign_keys.py", "UCX_TLS", "an example in a campaign error message"),
    ("reports/versus/campaign_keys.py", '"ucx-tcp"', "an example in a campaign error message"),
    ("reports/versus/campaign_keys.py", "self,tcp", "an example in a campaign error message"),
    ("reports/versus/campaign_keys.py", "required_text('\"shm\"')", "an example in a campaign error message"),
    ("reports/versus/lab.py", "UCX_TLS=tcp", "how the lab keeps a library off shared memory"),
    ("reports/versus/lab_cli.py", "tcp {b.get('congestion')", "TCP's congestion control, not a transport"),
    ("tests/stress/loaded.py", "openmpi also runs bistream with ob1's", "one library's regression case, described"),
    ("tests/stress/loaded.py", 'if transport == "openmpi":', "one library's regression case (ob1's shared-memory fragments)"),
    ("tests/launch/launch_integration.py", 'get("bootstrap") == "tcp"', "the TCP rendezvous bootstrap's recorded name"),
    ("tests/transport/transport_check.c", "shm", "shm's single copy, checked when its tests ask (--expect-shm-mapping)"),
    ("tests/transport/run_check.py", "shm", "shm's single copy, checked when its tests ask (--expect-shm-mapping)"),
]

# Words that contain a name and are not a transport.
NOT_A_TRANSPORT = ["/dev/shm"]

SKIP_DIRS = {".git", "__pycache__", "node_modules"}


def module_names(root):
    names = [m for m in os.environ.get("VERSUS_DECLARED_MODULES", "").split(",") if m]
    # the template: its name is an ordinary word, and a copy of it gets a name of its own
    return [m for m in names if m != "example"]


def own_test_dirs(root):
    """tests/<folder>/ for each module's 'tests' key in transports/*/meson.build."""
    out = set()
    tdir = os.path.join(root, "transports")
    for d in sorted(os.listdir(tdir)):
        mb = os.path.join(tdir, d, "meson.build")
        if os.path.isfile(mb):
            with open(mb, encoding="utf-8") as f:
                out.update(re.findall(r"'tests':\s*'([\w-]+)'", f.read()))
    return {f"tests/{t}/" for t in out}


def allowed_area(rel, areas):
    return any(rel == a or (a.endswith("/") and rel.startswith(a)) for a in areas)


def files(root):
    """The tree's files: those git tracks in a checkout (not results or reports a user left in
    it), every file of an unpacked release."""
    try:
        p = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True, timeout=60,
                           stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        p = None
    if p is not None and p.returncode == 0 and p.stdout:
        for rel in sorted(p.stdout.decode("utf-8", "replace").split("\0")):
            path = os.path.join(root, rel)
            if rel and os.path.isfile(path) and not os.path.islink(path):
                yield path, rel
        return
    for dirpath, dirnames, filenames in os.walk(root):
        # hidden folders, build trees (a folder Meson configured) and the project's virtual environment
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith(".")
                             and not os.path.isdir(os.path.join(dirpath, d, "meson-private"))
                             and not os.path.isfile(os.path.join(dirpath, d, "pyvenv.cfg")))
        for fn in sorted(filenames):
            path = os.path.join(dirpath, fn)
            if not os.path.islink(path):
                yield path, os.path.relpath(path, root).replace(os.sep, "/")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("VERSUS_SOURCE_ROOT", "")
    if not root or not os.path.isdir(os.path.join(root, "transports")):
        print(f"usage: {sys.argv[0]} SOURCE_ROOT (a versus source tree; got {root!r})", file=sys.stderr)
        return 2
    names = module_names(root)
    if not names:
        print("SKIP: VERSUS_DECLARED_MODULES is empty: run through meson test", flush=True)
        return 77
    word = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    areas = dict(AREAS, **{d: "the module's own tests" for d in own_test_dirs(root)})
    found, used = [], set()
    scanned = 0
    for path, rel in files(root):
        if allowed_area(rel, areas):
            continue
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue   # binary
        scanned += 1
        for n, line in enumerate(text.splitlines(), 1):
            bare = line
            for w in NOT_A_TRANSPORT:
                bare = bare.replace(w, "")
            m = word.search(bare)
            if not m:
                continue
            ok = [i for i, (f, t, _) in enumerate(LINES) if f == rel and t in line]
            if ok:
                used.update(ok)
                continue
            found.append(f"{rel}:{n}: names {m.group(1)}: {line.strip()[:120]}")
    print(f"{scanned} files read outside the {len(areas)} places that may name transports "
          f"({', '.join(names)})")
    stale = [f"{f}: {t!r} ({why})" for i, (f, t, why) in enumerate(LINES) if i not in used]
    for s in stale:
        print(f"FAIL: an allowed line no longer names a transport, remove it from LINES: {s}")
    for s in found:
        print(f"FAIL: {s}")
    if found:
        print("A transport's name belongs in transports/NAME/ and tests/NAME/; elsewhere ask what the "
              "modules declare (versus-run --list --json, vs_backends in transports/meson.build).")
    if found or stale:
        return 1
    print("ok: no transport is named outside its own places")
    return 0


if __name__ == "__main__":
    sys.exit(main())
