"""Where a campaign's ranks run, as a small object the campaign asks rather than branches on.

A place answers four questions:

    nodes              how many nodes a run may spread its ranks over
    ready()            raise InputError when runs cannot start there now
    place(spec, kind)  the hosts, the launcher's own arguments and any runner arguments a run
                       started with launcher `kind` needs there
    command(argv)      the command that starts argv there

Here is this machine, or the nodes of the Slurm allocation the campaign runs in (its launcher, srun,
finds them itself); the boxes of `versus lab` are lab.Boxes.
"""
from __future__ import annotations

from . import lab


class Here:
    """This machine, or the Slurm allocation the campaign runs in."""

    def __init__(self, environ: dict):
        self.nodes = 1
        for k in ("SLURM_JOB_NUM_NODES", "SLURM_NNODES"):
            try:
                self.nodes = max(1, int(environ[k]))
                break
            except (KeyError, ValueError):
                pass

    def ready(self) -> None:
        return None

    def place(self, spec, kind: str) -> tuple[list, list, list]:
        return spec.hosts, spec.launcher_args, []

    def command(self, argv: list[str]) -> list[str]:
        return argv


def ranks_run(environ: dict, on_lab: bool = False):
    """The place of a campaign: the lab's boxes (--lab), else here."""
    return lab.Boxes() if on_lab else Here(environ)
