"""`meson install` of this build into a temporary prefix (DESTDIR), the prefix then moved
elsewhere: from the moved tree, versus-run loads all six transports (from the moved tree,
nothing else), runs a local shm ping-pong, and the installed `versus` summarises it; both
manual pages render with `man -l` and hold ENVIRONMENT, EXIT STATUS, FILES, EXAMPLES and
SEE ALSO; bash completion offers transports, patterns and options; the transport SDK's
headers compile alone, pkg-config gives their flags from the moved tree, the example
transport builds out of tree with only those flags and loads through VERSUS_MODULE_PATH,
a module built for the next or the previous ABI version is refused by name, and so is one
whose option table has a row without a key.

usage: test_install.py BUILD_DIR
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import vstest as vt  # noqa: E402

build = sys.argv[1]
src = os.environ.get("VERSUS_SOURCE_ROOT") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
tmp = vt.tmpdir()
dest = os.path.join(tmp, "dest")

# a clean environment: nothing may point back into the source or build tree
env = {k: v for k, v in os.environ.items()
       if k not in ("VERSUS_MODULE_PATH", "PYTHONPATH", "LD_LIBRARY_PATH", "VERSUS_RUN")}


def sh(cmd, ok=(0,), **kw):
    vt.log("$ " + " ".join(cmd))
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300,
                       stdin=subprocess.DEVNULL, env=kw.pop("env", env), **kw)
    if p.returncode not in ok:
        vt.fail(f"exit {p.returncode}: {' '.join(cmd)}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return p


sh(["meson", "install", "-C", build, "--destdir", dest, "--no-rebuild", "--quiet"])
(runner,) = glob.glob(os.path.join(dest, "**", "bin", "versus-run"), recursive=True)
prefix = os.path.dirname(os.path.dirname(runner))
moved = os.path.join(tmp, "moved", "elsewhere")
os.makedirs(os.path.dirname(moved))
shutil.move(prefix, moved)
shutil.rmtree(dest)
vt.log(f"installed into {prefix} (DESTDIR), moved to {moved}")
run = os.path.join(moved, "bin", "versus-run")
versus = os.path.join(moved, "bin", "versus")
vt.check(os.access(run, os.X_OK) and os.access(versus, os.X_OK), "bin/versus-run and bin/versus are installed")

# --- the runner finds its modules relative to itself
mods = json.loads(sh([run, "--list", "--json"]).stdout)
loaded = {m["name"]: m for m in mods if m.get("loads")}
for name in ("openmpi", "mpich", "ucx", "ofi", "shm", "tcp"):
    vt.check(name in loaded and os.path.realpath(loaded[name]["path"]).startswith(os.path.realpath(moved)),
             f"{name} loads from the moved prefix ({loaded.get(name, {}).get('path')})")
out = os.path.join(tmp, "shm.jsonl")
sh([run, "-t", "shm", "--launch", "local", "-n", "2", "-s", "8,1K", "-i", "200", "-w", "20", "--out", out,
    "--quiet"])
p = sh([versus, "summary", out])
vt.check("shm" in p.stdout and "8" in p.stdout, "the installed versus summarises the run")
p = sh([versus, "--version"])
vt.check(p.stdout.startswith("versus "), f"versus --version ({p.stdout.strip()})")
pkgdir = glob.glob(os.path.join(moved, "share", "versus", "python", "versus", "templates", "report.html.j2"))
vt.check(len(pkgdir) == 1, "the package and its templates are under share/versus/python")

# --- manual pages
sections = ["ENVIRONMENT", "EXIT STATUS", "FILES", "EXAMPLES", "SEE ALSO"]
for page, words in (("versus-run.1", ["--transport", "--pattern", "--sizes", "VERSUS_MODULE_PATH", "SLURM_PROCID"]
                     + sections),
                    ("versus.1", ["COMMANDS", "baseline", "import", "--tolerance", "VERSUS_RUN"] + sections)):
    path = os.path.join(moved, "share", "man", "man1", page)
    vt.check(os.path.exists(path), f"share/man/man1/{page} is installed")
    p = sh(["man", "-l", path], env=dict(env, MANWIDTH="100", MAN_KEEP_FORMATTING="0", PAGER="cat"))
    text = re.sub(r".\x08", "", p.stdout)
    for w in words:
        vt.check(w in text, f"man -l {page} renders and holds {w!r}")

# --- bash completion
comp = os.path.join(moved, "share", "bash-completion", "completions")


def complete(cmd, words):
    script = (f'source "{comp}/{cmd}"; COMP_WORDS=({" ".join(json.dumps(w) for w in words)}); '
              f'COMP_CWORD={len(words) - 1}; {"_versus_run" if cmd == "versus-run" else "_versus"}; '
              'printf "%s\\n" "${COMPREPLY[@]}"')
    p = sh(["bash", "-c", script], env=dict(env, PATH=os.path.join(moved, "bin") + ":" + env.get("PATH", "")))
    return p.stdout.split()


got = complete("versus-run", ["versus-run", "-t", ""])
vt.check({"shm", "tcp", "ucx", "ofi", "openmpi", "mpich"} <= set(got), f"versus-run -t <TAB>: {got}")
got = complete("versus-run", ["versus-run", "-p", ""])
vt.check({"pingpong", "stream", "doublebuffer"} <= set(got), f"versus-run -p <TAB>: {got}")
got = complete("versus-run", ["versus-run", "--pat"])
vt.check(got == ["--pattern"], f"versus-run --pat<TAB>: {got}")
got = complete("versus", ["versus", "ba"])
vt.check(got == ["baseline"], f"versus ba<TAB>: {got}")
got = complete("versus", ["versus", "check", "--ju"])
vt.check(got == ["--junit"], f"versus check --ju<TAB>: {got}")

# --- the transport SDK
inc = os.path.join(moved, "include", "versus")
cc = shutil.which("cc") or shutil.which("gcc")
for h in sorted(os.listdir(inc)):
    p = subprocess.run([cc, "-fsyntax-only", "-Wall", "-Werror", "-x", "c", "-I", os.path.join(moved, "include"),
                        "-"], input=f"#include <versus/{h}>\n", text=True, capture_output=True)
    vt.check(p.returncode == 0, f"<versus/{h}> compiles alone {p.stderr.strip()[:300]}")
(pcdir,) = {os.path.dirname(p) for p in glob.glob(os.path.join(moved, "**", "versus-transport.pc"), recursive=True)}
penv = dict(env, PKG_CONFIG_PATH=pcdir)
cflags = sh(["pkg-config", "--cflags", "versus-transport"], env=penv).stdout.split()
vt.check(any(f.startswith("-I") and os.path.realpath(f[2:]) == os.path.realpath(os.path.join(moved, "include"))
             for f in cflags), f"pkg-config --cflags versus-transport points into the moved prefix ({cflags})")
abi = sh(["pkg-config", "--variable=transport_abi", "versus-transport"], env=penv).stdout.strip()
header = open(os.path.join(inc, "transport.h"), encoding="utf-8").read()
declared = re.search(r"^#define VS_TRANSPORT_ABI (\d+)$", header, re.M)
oldest = re.search(r"^#define VS_TRANSPORT_ABI_OLDEST (\d+)$", header, re.M)
vt.check(oldest is not None and int(oldest.group(1)) <= int(declared.group(1)),
         "the header says which interfaces the runner still loads (VS_TRANSPORT_ABI_OLDEST)")
vt.check(abi.isdigit() and declared and declared.group(1) == abi,
         f"versus-transport.pc records the transport ABI of the installed header ({abi}, "
         f"header: {declared and declared.group(1)})")

ext = os.path.join(tmp, "mytransport")
code = open(os.path.join(src, "transports", "example", "example.c"), encoding="utf-8").read()
vt.check(".abi = VS_TRANSPORT_ABI," in code, "the example declares the ABI it was built for")
# an option table of two rows that fills one (a gap left by designated initializers)
anchor = "    .progress = example_progress,\n"
vt.check(anchor in code, "the example's ops table sets .progress (where the test adds an option table)")
holes = code.replace(anchor, anchor + '    .options = (const vs_option_t[2]){{"a", VS_OPT_TEXT, NULL, 0, "x", "y"}},\n'
                     "    .n_options = 2,\n")
# the example as it is, as if built for the next interface and for the one before the oldest the runner
# still loads, as an interface-4 module (its table ends before the one-sided operations), and with that table
for variant, text in (("good", code),
                      ("newer", code.replace(".abi = VS_TRANSPORT_ABI,", ".abi = VS_TRANSPORT_ABI + 1,")),
                      ("older", code.replace(".abi = VS_TRANSPORT_ABI,", ".abi = VS_TRANSPORT_ABI_OLDEST - 1,")),
                      ("four", code.replace(".abi = VS_TRANSPORT_ABI,", ".abi = VS_TRANSPORT_ABI_OLDEST,")
                       .replace(".size = sizeof(vs_transport_ops_t),", ".size = VS_TRANSPORT_OPS_SIZE_4,")),
                      ("holes", holes)):
    os.makedirs(os.path.join(ext, variant))
    c_file = os.path.join(ext, variant, "example.c")
    with open(c_file, "w") as f:
        f.write(text)
    sh([cc, "-shared", "-fPIC", "-O2", *cflags, c_file, "-o", os.path.join(ext, variant, "versus-example.so")],
       env=penv)
genv = dict(env, VERSUS_MODULE_PATH=os.path.join(ext, "good"))
mods = {m["name"]: m for m in json.loads(sh([run, "--list", "--json"], env=genv).stdout)}
vt.check(mods.get("example", {}).get("loads") and mods["example"]["path"].startswith(ext),
         f"the out-of-tree example loads through VERSUS_MODULE_PATH ({mods.get('example')})")
out = os.path.join(tmp, "example.jsonl")
sh([run, "-t", "example", "--launch", "local", "-n", "2", "-s", "8,1K", "-i", "100", "--out", out, "--quiet"], env=genv)
_, sizes, end = vt.read_jsonl(out)
vt.check(len(sizes) == 2 and end.get("status") == "ok", "a run over the out-of-tree transport completes")
for variant, built_for in (("newer", int(abi) + 1), ("older", int(oldest.group(1)) - 1)):
    p = sh([run, "-t", "example", "--launch", "local", "-n", "2", "-s", "8"], ok=(1, 2),
           env=dict(env, VERSUS_MODULE_PATH=os.path.join(ext, variant)))
    vt.check(f"was built for transport interface {built_for}, this runner speaks {abi}" in p.stderr
             and "rebuild it" in p.stderr,
             f"a module built for interface {built_for} ({variant}) is refused with the reason "
             f"({p.stderr.strip()[:200]})")
fenv = dict(env, VERSUS_MODULE_PATH=os.path.join(ext, "four"))
sh([run, "-t", "example", "--launch", "local", "-n", "2", "-s", "8", "-i", "20", "--quiet"], env=fenv)
p = sh([run, "-t", "example", "--launch", "local", "-n", "2", "-p", "put", "-s", "8"], ok=(77,), env=fenv)
vt.check("has no one-sided operations" in p.stderr,
         f"an interface-{oldest.group(1)} module runs pingpong and is refused for put with 77 and the reason "
         f"({p.stderr.strip()[:200]})")
p = sh([run, "-t", "example", "--launch", "local", "-n", "2", "-s", "8"], ok=(1, 2),
       env=dict(env, VERSUS_MODULE_PATH=os.path.join(ext, "holes")))
vt.check(p.returncode == 2 and "row 1 of its 2 options has no key" in p.stderr,
         f"a module whose option table has a row without a key is refused, exit 2 ({p.returncode}: "
         f"{p.stderr.strip()[:200]})")
print("install: relocatable, six transports, versus, man pages, completion, SDK out of tree")
