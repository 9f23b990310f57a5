"""An MPI module started by the other MPI's launcher, or by none, exits 2 and names the right launcher."""
import sys

import vstest as vt
from launchers import LAUNCH, OTHER

flavour = sys.argv[1]
vt.need_module(flavour)
right = LAUNCH[flavour][0]
wrong = LAUNCH[OTHER[flavour]]
vt.need_program(wrong[0])

p = vt.run(["--transport", flavour, "--sizes", "8", "--iterations", "5"], launcher=wrong, timeout=60)
vt.check(p.returncode != 0, f"{flavour} under {wrong[0]} fails (exit {p.returncode})")
vt.check(p.returncode == 2, f"{flavour} under {wrong[0]} exits 2")
vt.check(right in p.stderr, f"the message names {right}")

p = vt.run(["--transport", flavour, "--sizes", "8", "--iterations", "5"], timeout=60)
vt.check(p.returncode == 2, f"{flavour} without a launcher exits 2")
vt.check("not started by an MPI launcher" in p.stderr and right in p.stderr, f"the message names {right}")

p = vt.run(["--transport", flavour, "--launch", "local", "-n", "2", "--sizes", "8"], timeout=60)
vt.check(p.returncode == 2 and right.split(".")[0] in p.stderr, f"{flavour} refuses --launch local and names its launcher")
