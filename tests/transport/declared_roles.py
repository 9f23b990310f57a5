#!/usr/bin/env python3
"""What a module is to the analysis is declared twice in its folder, for two readers: the
`reference` key of its Meson declaration (for the suites, chosen at configure time) and the
`.roles` of its ops table (for the run records and the report, on any machine).  This checks
that every built module's two declarations agree, that a floor is also a reference (versus's
own, no library's), that at most one module is the floor, and that a run record carries what
the module declared."""
import json
import os

import vstest as vt
from versus import modules as vsmod

meson_refs = {m for m in os.environ.get("VERSUS_REFERENCE_MODULES", "").split(",") if m}
declared = vsmod.declared(vt.RUNNER)
built = [n for n in vt.BUILT if n in declared and declared[n].get("loads")]
vt.check(built, f"modules built and loading: {', '.join(built)}")
for name in built:
    roles = declared[name].get("roles")
    vt.check(isinstance(roles, list) and set(roles) <= {"reference", "floor"},
             f"{name}: --list --json gives its roles as a list of known names ({roles})")
    vt.check(("reference" in roles) == (name in meson_refs),
             f"{name}: the ops table's roles ({roles}) and the Meson 'reference' key "
             f"({name in meson_refs}) agree")
    if "floor" in roles:
        vt.check("reference" in roles, f"{name}: the floor is versus's own (a reference) too")
floors = [n for n in built if "floor" in declared[n]["roles"]]
vt.check(len(floors) <= 1, f"at most one module declares itself the floor ({floors})")

# a run record carries the roles of the module that made it
local = [n for n in built if not declared[n].get("bootstrap")]
vt.check(local, "a module the local launcher starts")
d = vt.tmpdir()
for name in local:
    out = os.path.join(d, f"{name}.jsonl")
    p = vt.run(["--transport", name, "--launch", "local", "-n", "2", "--sizes", "8", "--iterations", "5",
                "--warmup", "1", "--out", out, "--quiet"], timeout=60)
    vt.check(p.returncode == 0, f"{name}: a short run exits 0")
    run = vt.read_jsonl(out)[0]
    vt.check(run["transport"].get("roles") == declared[name]["roles"],
             f"{name}: the run record's transport.roles ({run['transport'].get('roles')}) is what "
             f"--list --json declares")
print("roles: " + "; ".join(f"{n} {declared[n]['roles']}" for n in built))
