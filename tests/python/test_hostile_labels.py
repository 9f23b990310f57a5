"""Strings from a results file reach the report as text, never as markup or paths: a provider
and a transport name carrying HTML, SVG quotes, a '/', LaTeX specials and mathtext '$'
leave no raw tag in the HTML, no unsafe id or href in the SVGs, and no figure file outside the
report's folder; matplotlib draws the '$' as written (no mathtext)."""
import json
import re

import synth
from versus.cli import main as cli_main

HOSTILE = 'pingpong"><img src=x onerror=alert(1)><svg x="'
VARIANT = "../../evil/$\\frac{1}{0}$_%#&{}"
NAME = "<script>alert(2)</script>$x$"


def hostile_run(path, launch):
    lines = synth.make_lines(synth.hockney(1000, 0.1), [8, 64, 512, 4096, 32768], count=40, seed=launch,
                             name=NAME, launch_id=launch)
    recs = [json.loads(x) for x in lines]
    recs[0]["transport"]["provider"] = HOSTILE + VARIANT
    recs[0]["hosts"] = ["$host$", "$host$"]
    path.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    return str(path)


def test_hostile_strings_stay_text(tmp_path):
    files = [hostile_run(tmp_path / f"h{k}.jsonl", k) for k in range(3)]
    out = tmp_path / "rep"
    assert cli_main(["report", *files, "-o", str(out)]) == 0
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "<img" not in html and "<script>" not in html
    for m in re.finditer(r'\b(id|href|xlink:href)="([^"]*)"', html):
        assert re.fullmatch(r"#?[A-Za-z0-9_.-]*", m.group(2)) or m.group(1) == "href", m.group(0)
    assert all(p.parent == out for p in out.rglob("*.pdf")), list(out.rglob("*.pdf"))
    assert not (tmp_path / "evil").exists()
    tex = (out / "report.tex").read_text(encoding="utf-8")
    for name in re.findall(r"\\includegraphics(?:\[[^]]*\])?\{([^}]*)\}", tex):
        assert re.fullmatch(r"[A-Za-z0-9./-]*", name) and ".." not in name, name


def test_a_pattern_or_variant_no_run_has_is_refused_before_any_report(tmp_path, capsys):
    for key, value in (("pattern", HOSTILE), ("variant", VARIANT)):
        path = tmp_path / f"{key}.jsonl"
        recs = [json.loads(x) for x in synth.make_lines(synth.hockney(1000, 0.1), [8, 64], count=20, seed=1)]
        recs[0][key] = value
        path.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
        assert cli_main(["report", str(path), "-o", str(tmp_path / "rep")]) == 2
        err = capsys.readouterr().err
        assert f"{path}:1" in err and ("unknown pattern" in err if key == "pattern" else "has no variant" in err)
        assert not (tmp_path / "rep" / "index.html").exists()


def test_a_line_break_in_an_sbatch_option_is_refused(tmp_path, monkeypatch, capsys):
    cfg = tmp_path / "c.toml"
    cfg.write_text('title = "t"\n[[run]]\nid = "a"\ntransport = "shm"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for bad in ("--time=1\ntouch X", "--time=1\rtouch X", "touch X", "--time=1\x00"):
        rc = cli_main(["campaign", str(cfg), "--sbatch", "--results", str(tmp_path / "r"),
                       f"--sbatch-option={bad}"])
        assert rc == 2, bad
        assert "one sbatch option on one line" in capsys.readouterr().err
    assert not (tmp_path / "X").exists()
    rc = cli_main(["campaign", str(cfg), "--sbatch", "--results", str(tmp_path / "r"),
                   "--sbatch-option=--time=01:00:00", "--sbatch-option=-N2"])
    assert rc == 0
    script = (tmp_path / "r" / "campaign.sbatch").read_text()
    assert "#SBATCH --time=01:00:00\n#SBATCH -N2\n" in script and "touch" not in script


def test_campaign_type_errors_are_reported_at_load_time(tmp_path, capsys):
    for line, words in (("cpus = [0, 1]", "cpus must be a string"), ('sizes = ["8"]', "sizes must be a string"),
                        ("sizes = 8", "sizes must be a string"), ("variants = [1]", "variants must be a list"),
                        ("batch = [2]", "batch must be a whole number")):
        cfg = tmp_path / "c.toml"
        cfg.write_text(f'title = "t"\n[[run]]\nid = "a"\ntransport = "shm"\n{line}\n', encoding="utf-8")
        assert cli_main(["campaign", str(cfg), "--sbatch", "--results", str(tmp_path / "r")]) == 2, line
        assert words in capsys.readouterr().err, line


def test_campaign_files_that_are_not_campaigns_exit_2(tmp_path, capsys):
    cases = {"huge.toml": ('title = "t"\ntimeout = 1e10\n[[run]]\nid = "a"\ntransport = "shm"\n', "at most"),
             "deep.toml": ("a = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply")}
    for name, (text, words) in cases.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        assert cli_main(["campaign", str(tmp_path / name), "--sbatch", "--results", str(tmp_path / "r")]) == 2
        assert words in capsys.readouterr().err, name
    assert cli_main(["campaign", "/dev/zero", "--sbatch", "--results", str(tmp_path / "r")]) == 2
    assert "not a regular file" in capsys.readouterr().err
