"""Every backend a folder under transports/ declares is built and loads (CI shows none was
skipped), and what each module declares of itself is what campaigns and records use."""
import os
from pathlib import Path

import vstest as vt
from versus import modules as vsmod

root = Path(os.environ["VERSUS_SOURCE_ROOT"])
declared_by_meson = [m for m in os.environ.get("VERSUS_DECLARED_MODULES", "").split(",") if m]
folders = sorted(d.name for d in (root / "transports").iterdir()
                 if (d / "meson.build").is_file() and d.name != "common")
vt.check(len(declared_by_meson) >= len(folders),
         f"each backend folder declares at least one backend ({folders} -> {declared_by_meson})")

p = vt.run(["--list"], timeout=60)
vt.check(p.returncode == 0, "--list exits 0")
rows = {ln.split()[0]: ln.split()[1] for ln in p.stdout.splitlines()[1:] if ln and not ln.startswith(" ")}
decl = vsmod.declared(os.environ["VERSUS_RUN"])
for name in declared_by_meson:
    vt.check(name in vt.BUILT, f"transport module '{name}' was built")
    vt.check(rows.get(name) == "yes", f"transport module '{name}' loads (--list says {rows.get(name)})")
    m = decl.get(name, {})
    vt.check(m.get("loads") is True, f"--list --json says '{name}' loads")
    vt.check(bool(m.get("bootstrap")) == bool(m.get("launcher")),
             f"'{name}' names a launcher exactly when it brings its own bootstrap ({m.get('launcher')})")
    if m.get("launcher"):
        vt.need_program(m["launcher"]["program"])
        vt.check(m["launcher"]["kind"] in vsmod.LAUNCHERS, f"'{name}' launcher kind is one versus knows")

# libfabric: --list names the providers that work here (tcp and shm at least on Linux)
ofi_lines = [ln for ln in p.stdout.splitlines() if "providers usable here" in ln]
vt.check(len(ofi_lines) == 1, "--list names the usable libfabric providers")
usable = ofi_lines[0].split(":", 1)[1] if ofi_lines else ""
vt.check("tcp" in usable and "shm" in usable and "sockets" not in usable,
         f"usable providers include tcp and shm, not the refused sockets ({usable.strip()})")

# --list --json carries the same option tables as the text listing
shm_lines = [ln for ln in p.stdout.splitlines() if "--transport-opt" in ln and "(default: " in ln]
for name, m in decl.items():
    for op in m.get("options", []):
        vt.check(any(f"--transport-opt {op['key']}=" in ln for ln in shm_lines),
                 f"--list shows {name}'s option {op['key']} that --list --json declares")

# the run record's env holds the variables its module declares, and not another library's
d = vt.tmpdir()
all_prefixes = sorted({x for m in decl.values() for x in m.get("env_prefixes", [])})
probe = {x + "VERSUS_PROBE": "1" for x in all_prefixes} | {"VERSUS_PROBE": "1"}
for name, m in sorted(decl.items()):
    if m.get("bootstrap") or not m.get("loads"):
        continue  # started by their own launchers: tests/mpi records their environment
    out = Path(d) / f"{name}.jsonl"
    r = vt.run(["--launch", "local", "-n", "2", "-t", name, "-s", "8", "-i", "10", "-w", "1", "-q",
                "-O", str(out)], env=probe, timeout=120)
    vt.check(r.returncode == 0, f"{name} run exits 0")
    env = vt.read_jsonl(out)[0]["env"]
    vt.check(env.get("VERSUS_PROBE") == "1", f"{name}: versus's own variables are recorded")
    for x in all_prefixes:
        vt.check((x + "VERSUS_PROBE" in env) == any((x + "VERSUS_PROBE").startswith(y) for y in m["env_prefixes"]),
                 f"{name}: {x}* variables recorded exactly when the module declares them ({m['env_prefixes']})")

# --json only goes with --list
p = vt.run(["--json"], timeout=30)
vt.check(p.returncode == 2 and "--list" in p.stderr, f"--json alone exits 2 and says why ({p.stderr.strip()})")
