"""Any JSON value in any field of a results file's run, size or end record gives `versus summary`
and `versus compare` an answer or one clear error (exit 2), never a traceback: NaN, Infinity, text,
negative and huge numbers, null, lists and objects where a number, a name or an object belongs."""
import contextlib
import copy
import io
import json

import synth
from versus.cli import main as cli_main

VALUES = [float("nan"), float("inf"), "text", -1, 1e30, None, [], {}, True, 2 ** 70]


def test_every_field_every_value(tmp_path):
    base = [json.loads(x) for x in synth.make_lines(synth.hockney(1000, 0.1), [8, 64, 512], count=20, seed=1)]
    p = tmp_path / "f.jsonl"
    failures, cases = [], 0
    for i, rec in enumerate(base):
        for key in [k for k in rec if k != "record"]:
            for v in VALUES:
                recs = copy.deepcopy(base)
                recs[i][key] = v
                p.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
                for cmd in (["summary", str(p), "--json"], ["compare", str(p), str(p)]):
                    cases += 1
                    try:
                        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                            rc = cli_main(cmd)
                    except SystemExit as e:
                        rc = e.code
                    except Exception as e:  # noqa: BLE001 (the point: nothing may escape)
                        failures.append(f"{rec['record']}.{key} = {v!r}: {cmd[0]}: {type(e).__name__}: {e}")
                        continue
                    if rc not in (0, 2):
                        failures.append(f"{rec['record']}.{key} = {v!r}: {cmd[0]} exits {rc}")
    assert cases > 500
    assert not failures, f"{len(failures)} of {cases}: " + "; ".join(failures[:8])
