"""A private Slurm on this machine for the tests: its own munge key and socket, slurmctld and one
slurmd, all state under one temporary directory; nothing of the system's configuration is read
or touched (clients find it through SLURM_CONF).  `down` stops every daemon it started and removes
the directory, also after a failed test (use it as a context manager).

With two_nodes=True it is a two-node cluster on the two boxes of `versus lab` (network namespaces
box-a 10.213.7.1 and box-b 10.213.7.2): slurmctld and node box-a's slurmd in box-a, node box-b's
slurmd in box-b, each daemon in a mount and UTS namespace of its own with its box's host name and
host file, its /sys showing its own network namespace's devices and the cgroup tree still mounted
(slurmd needs it), pinned to its own CPU (the nodes have one each).  Clients (srun, salloc, sbatch)
run on box-a (Slurm.client)."""
import os
import shutil
import signal
import subprocess
import tempfile
import time

DAEMONS = ("munged", "slurmctld", "slurmd", "srun", "salloc", "sbatch", "scancel", "sinfo")
CTLD_PORT, SLURMD_PORT = 16817, 16818


def missing():
    """What this machine lacks to run the private Slurm, or None."""
    if os.geteuid() != 0:
        return "the private Slurm needs root (slurmd starts the job steps)"
    lack = [d for d in DAEMONS if not shutil.which(d) and not os.path.exists(f"/usr/sbin/{d}")]
    return f"not installed: {', '.join(lack)} (apt install slurm-wlm munge)" if lack else None


def _lab():
    """versus lab (the two boxes), imported only when two nodes are asked for."""
    from versus import lab
    return lab


def _bin(name):
    return shutil.which(name) or f"/usr/sbin/{name}"


# A daemon "on" a box: its network namespace; a mount namespace in which the box's host file is
# /etc/hosts and /sys is remounted for that network namespace with the cgroup tree moved back onto
# it (ip netns exec would hide the cgroup tree); a UTS namespace with the box's host name.
_ON_BOX = r"""set -e
mount --bind "/etc/netns/$VS_NETNS/hosts" /etc/hosts
hostname "$VS_HOST"
keep="$VS_DIR/cgroup-$VS_HOST"; mkdir -p "$keep"
mount --rbind /sys/fs/cgroup "$keep"
mount -t sysfs sysfs /sys
mount --move "$keep" /sys/fs/cgroup
exec taskset -c "$VS_CPU" "$@"
"""


class Slurm:
    def __init__(self, node="vsnode", cpus=None, two_nodes=False):
        self.dir = tempfile.mkdtemp(prefix="versus-slurm-")
        os.chmod(self.dir, 0o755)  # munged wants every directory above its socket reachable
        self.two_nodes = two_nodes
        self.node = node
        self.nodes = [b.name for b in _lab().BOXES] if two_nodes else [node]
        self.cpus = cpus or os.cpu_count() or 1
        self.conf = os.path.join(self.dir, "slurm.conf")
        self.sock = os.path.join(self.dir, "munge-run", "munge.socket.2")
        self.env = dict(os.environ, SLURM_CONF=self.conf)

    def path(self, *p):
        return os.path.join(self.dir, *p)

    def __enter__(self):
        try:
            self.up()
        except BaseException:
            self.down()
            raise
        return self

    def __exit__(self, *exc):
        self.down()
        return False

    def on_box(self, i, argv):
        """argv as a daemon on box i (see _ON_BOX)."""
        b = _lab().BOXES[i]
        env = ["env", f"VS_NETNS={b.netns}", f"VS_HOST={b.name}", f"VS_DIR={self.dir}",
               f"VS_CPU={i % (os.cpu_count() or 1)}"]
        return ["nsenter", f"--net=/run/netns/{b.netns}", "unshare", "--uts", "--mount", "--propagation",
                "private", *env, "sh", "-c", _ON_BOX, "on-box", *argv]

    def client(self, argv):
        """argv as a command on the cluster's login node (box-a with two nodes, here otherwise)."""
        return _lab().command("a", argv) if self.two_nodes else list(argv)

    def _node_lines(self):
        if not self.two_nodes:
            return (f"NodeName={self.node} NodeHostname={os.uname().nodename} NodeAddr=127.0.0.1 "
                    f"CPUs={self.cpus} RealMemory=1000 State=UNKNOWN\n")
        return "".join(f"NodeName={b.name} NodeHostname={b.name} NodeAddr={b.addr} CPUs=1 RealMemory=1000 "
                       "State=UNKNOWN\n" for b in _lab().BOXES)

    def up(self, timeout=30.0):
        if self.two_nodes:
            _lab().up()
        for d in ("munge", "munge-run", "log", "ctld", "run", "spool", "tmp"):
            os.makedirs(self.path(d), exist_ok=True)
        os.chmod(self.path("munge"), 0o700)
        os.chmod(self.path("munge-run"), 0o755)  # munge refuses a socket directory others cannot reach
        key = self.path("munge", "munge.key")
        subprocess.run([_bin("mungekey"), "-c", "-k", key], check=True, capture_output=True)
        os.chmod(key, 0o400)
        subprocess.run([_bin("munged"), f"--socket={self.sock}", f"--key-file={key}",
                        f"--log-file={self.path('log', 'munged.log')}",
                        f"--pid-file={self.path('munge-run', 'munged.pid')}",
                        f"--seed-file={self.path('munge', 'munged.seed')}"], check=True, capture_output=True)
        host = os.uname().nodename
        ctld = f"{_lab().BOXES[0].name}({_lab().BOXES[0].addr})" if self.two_nodes else f"{host}(127.0.0.1)"
        with open(self.conf, "w", encoding="utf-8") as f:
            f.write(f"""ClusterName=versus
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={self.sock},cred_expire=10
CredType=cred/munge
SlurmctldHost={ctld}
SlurmctldPort={CTLD_PORT}
SlurmdPort={SLURMD_PORT}
StateSaveLocation={self.path('ctld')}
SlurmdSpoolDir={self.path('spool')}/%n
TmpFS={self.path('tmp')}/%n
SlurmctldPidFile={self.path('run', 'slurmctld.pid')}
SlurmdPidFile={self.path('run', 'slurmd-%n.pid')}
SlurmctldLogFile={self.path('log', 'slurmctld.log')}
SlurmdLogFile={self.path('log', 'slurmd-%n.log')}
ProctrackType=proctrack/linuxproc
TaskPlugin={'task/none' if self.two_nodes else 'task/affinity'}
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1,bf_interval=1
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
InactiveLimit=0
KillWait=5
MinJobAge=5
Waittime=0
{self._node_lines()}PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")
        for n in self.nodes:
            os.makedirs(self.path("spool", n), exist_ok=True)
            os.makedirs(self.path("tmp", n), exist_ok=True)
        ctld = [_bin("slurmctld"), "-f", self.conf]
        subprocess.run(self.on_box(0, ctld) if self.two_nodes else ctld, check=True, capture_output=True,
                       env=self.env)
        for i, n in enumerate(self.nodes):
            slurmd = [_bin("slurmd"), "-f", self.conf, "-N", n]
            subprocess.run(self.on_box(i, slurmd) if self.two_nodes else slurmd, check=True, capture_output=True,
                           env=self.env)
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            p = subprocess.run(self.client(["sinfo", "-h", "-N", "-o", "%T"]), capture_output=True, text=True,
                               env=self.env)
            if p.returncode == 0 and p.stdout.split() == ["idle"] * len(self.nodes):
                self.up_s = time.monotonic() - t0
                return
            time.sleep(0.05)
        raise RuntimeError(f"the private Slurm did not come up within {timeout:g} s:\n" + self.logs())

    def logs(self):
        out = []
        for name in sorted(os.listdir(self.path("log"))) if os.path.isdir(self.path("log")) else []:
            with open(self.path("log", name), encoding="utf-8", errors="replace") as f:
                out.append(f"--- {name}\n" + "".join(f.readlines()[-15:]))
        return "\n".join(out)

    def srun(self, args, timeout=120, env=None, cwd=None):
        e = dict(self.env, **(env or {}))
        return subprocess.run(self.client(["srun", *args]), capture_output=True, text=True, timeout=timeout, env=e,
                              cwd=cwd, stdin=subprocess.DEVNULL)

    def down(self):
        subprocess.run(self.client(["scancel", "--full", "-u", "root"]), capture_output=True, env=self.env)
        for pidfile in [self.path("run", f"slurmd-{n}.pid") for n in self.nodes] + [
                self.path("run", "slurmctld.pid"), self.path("munge-run", "munged.pid")]:
            try:
                with open(pidfile, encoding="utf-8") as f:
                    pid = int(f.read().strip())
            except (OSError, ValueError):
                continue
            for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 2.0)):
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    break
                t0 = time.monotonic()
                while time.monotonic() - t0 < wait and os.path.exists(f"/proc/{pid}"):
                    time.sleep(0.05)
                    try:  # reap when it is our child
                        os.waitpid(pid, os.WNOHANG)
                    except ChildProcessError:
                        pass
                if not os.path.exists(f"/proc/{pid}"):
                    break
        if self.two_nodes:
            _lab().down()
        shutil.rmtree(self.dir, ignore_errors=True)

    def running(self):
        """Daemons of this Slurm still alive (for the test that down leaves nothing)."""
        out = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if self.dir in cmd:
                out.append(f"{pid}: {cmd.strip()}")
        return out


def down_and_check(s: Slurm) -> None:
    """Stop s, then check that no daemon of it runs and its directory is gone."""
    import vstest as vt
    daemons_dir = s.dir
    s.down()
    left = s.running()
    vt.check(not left and not os.path.exists(daemons_dir), f"down leaves no daemon and no directory ({left})")
