"""Every backend this machine should have is built and loads: CI shows none was skipped."""
import os
import subprocess

import vstest as vt

expected = ["openmpi", "mpich", "ucx", "ofi", "shm", "tcp"]
p = vt.run(["--list"], timeout=60)
vt.check(p.returncode == 0, "--list exits 0")
rows = {ln.split()[0]: ln.split()[1] for ln in p.stdout.splitlines()[1:] if ln and not ln.startswith(" ")}
for name in expected:
    vt.check(name in vt.BUILT, f"transport module '{name}' was built")
    vt.check(rows.get(name) == "yes", f"transport module '{name}' loads (--list says {rows.get(name)})")

# libfabric: --list names the providers that work here (tcp and shm at least on Linux)
ofi_lines = [ln for ln in p.stdout.splitlines() if "providers usable here" in ln]
vt.check(len(ofi_lines) == 1, "--list names the usable libfabric providers")
usable = ofi_lines[0].split(":", 1)[1] if ofi_lines else ""
vt.check("tcp" in usable and "shm" in usable and "sockets" not in usable,
         f"usable providers include tcp and shm, not the refused sockets ({usable.strip()})")

# shm: --list names its option keys with their defaults (what --transport-opt accepts)
shm_lines = [ln for ln in p.stdout.splitlines() if "--transport-opt" in ln and "(default: " in ln]
vt.check(all(any(f"--transport-opt {k}=" in ln for ln in shm_lines)
             for k in ("eager_limit", "ring", "single", "chunk", "chunks")),
         f"--list names shm's option keys ({shm_lines})")
