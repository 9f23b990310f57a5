"""Shared by the placement tests: how each backend is launched (as its module declares), what this
machine's topology allows (read from sysfs, independently of versus), and
reading the kernel's view of a running rank's binding."""
import os
import shutil
import subprocess

import backends


def need_backend(spec):
    """Skip (77) unless the module was built and its launcher exists; returns
    (module, launcher argv or None, extra versus-run args), as the module declares
    how it is started (tests/lib/backends.py)."""
    module, launcher, args = backends.prepare(spec)
    return module, launcher, args[2:]


def _read(path):
    try:
        with open(path, encoding="ascii") as f:
            return f.read().strip()
    except OSError:
        return None


def _parse_list(text):
    cpus = set()
    for part in (text or "").split(","):
        if not part:
            continue
        a, _, b = part.partition("-")
        cpus.update(range(int(a), int(b or a) + 1))
    return cpus


def usable_cpus():
    return sorted(os.sched_getaffinity(0))


def machine_facts():
    """SMT width, packages and NUMA nodes with CPUs, from sysfs."""
    cpus = usable_cpus()
    base = "/sys/devices/system/cpu/cpu{}/topology/"
    smt = max((len(_parse_list(_read(base.format(c) + "thread_siblings_list"))) for c in cpus), default=1)
    packages = {_read(base.format(c) + "physical_package_id") for c in cpus}
    nodes = 0
    node_dir = "/sys/devices/system/node"
    if os.path.isdir(node_dir):
        for n in os.listdir(node_dir):
            if n.startswith("node") and _parse_list(_read(os.path.join(node_dir, n, "cpulist"))) & set(cpus):
                nodes += 1
    return {"smt": smt, "packages": len(packages), "numa": max(nodes, 1)}


def kernel_binding(pid):
    """(Cpus_allowed_list, state) of a live process, or (None, None) if gone."""
    status = _read(f"/proc/{pid}/status")
    if status is None:
        return None, None
    fields = dict(ln.split(":", 1) for ln in status.splitlines() if ":" in ln)
    return fields.get("Cpus_allowed_list", "").strip(), fields.get("State", "").strip()


def hwloc_binding(tid):
    """hwloc-bind --get --tid (the main thread, which versus binds) as a CPU
    set, or None without hwloc-bind."""
    prog = shutil.which("hwloc-bind")
    if not prog:
        return None
    try:
        p = subprocess.run([prog, "--get", "--tid", str(tid), "--taskset"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=10)
    except subprocess.TimeoutExpired:
        return None
    mask = p.stdout.strip()
    if p.returncode != 0 or not mask.startswith("0x"):
        return None
    value = int(mask.replace(",", ""), 16)
    return {i for i in range(value.bit_length()) if value >> i & 1}


def cpu_set(text):
    return _parse_list(text)
