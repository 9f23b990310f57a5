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
