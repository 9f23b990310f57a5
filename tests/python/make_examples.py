#!/usr/bin/env python3
"""Write the small synthetic example result files kept in data/ (for render
and CLI tests).  Deterministic: rerunning rewrites identical files.

  python3 tests/python/make_examples.py [OUTDIR]
"""
import os
import sys

import synth

HERE = os.path.dirname(os.path.abspath(__file__))


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    # shared memory: small-message regime, rendezvous jump at 8 KiB
    shm = synth.piecewise((0, synth.hockney(350, 0.0)), (128, synth.hockney(420, 0.08)),
                          (8192, synth.hockney(1500, 0.075)))
    synth.write_run(os.path.join(outdir, "shm-pingpong.jsonl"), shm, synth.pow2(1 << 20), count=40, seed=1,
                    name="shm", thresholds={"rndv_thresh": 8192})
    # TCP-like: packetisation staircase every 1448 bytes, dense linear sweep
    synth.write_run(os.path.join(outdir, "tcp-staircase.jsonl"), synth.staircase(6000, 0.02, 1448, 1500),
                    list(range(8, 6001, 8)), count=12, seed=2, name="tcp")
    # a run killed after 64 KiB: no end record
    ucx = synth.piecewise((0, synth.hockney(900, 0.09)), (8192, synth.hockney(2200, 0.08)))
    synth.write_run(os.path.join(outdir, "ucx-incomplete.jsonl"), ucx, synth.pow2(1 << 16), count=40, seed=3,
                    name="ucx", provider="tcp", thresholds={"rndv_thresh": 8192}, end=False)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "data"))
