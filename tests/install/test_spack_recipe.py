"""The Spack recipe (contrib/spack/packages/versus/package.py) parses, and what it builds
matches the project: a variant and a depends_on for each transport feature of
meson_options.txt (plus hwloc), each variant passed to Meson as that feature, MesonPackage
as the build system, and the Python packages the `versus` command imports at run time
(reports/pyproject.toml's dependencies).  No Spack is needed (none is installed here): the
recipe is read as Python source."""
import ast
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import vstest as vt  # noqa: E402

ROOT = os.environ.get("VERSUS_SOURCE_ROOT") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
recipe_path = os.path.join(ROOT, "contrib", "spack", "packages", "versus", "package.py")
src = open(recipe_path, encoding="utf-8").read()
tree = ast.parse(src, recipe_path)
vt.check(True, "the recipe parses as Python")

classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
vt.check(len(classes) == 1 and classes[0].name == "Versus", "one package class, Versus")
cls = classes[0]
vt.check([b.id for b in cls.bases if isinstance(b, ast.Name)] == ["MesonPackage"], "built with MesonPackage")


def calls(name):
    out = []
    for node in ast.walk(cls):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name:
            args = [a.value for a in node.args if isinstance(a, ast.Constant)]
            kw = {k.arg: k.value.value for k in node.keywords if isinstance(k.value, ast.Constant)}
            out.append((args, kw))
    return out


variants = {a[0]: kw for a, kw in calls("variant")}
deps = [(a[0], kw.get("when")) for a, kw in calls("depends_on")]

# meson_options.txt: every 'feature' option is a backend (or hwloc)
opts = open(os.path.join(ROOT, "meson_options.txt"), encoding="utf-8").read()
features = re.findall(r"option\('([^']+)',\s*type:\s*'feature'", opts)
vt.check(sorted(features) == sorted(["openmpi", "mpich", "ucx", "ofi", "hwloc"]),
         f"meson_options.txt's features are the four backends and hwloc ({features})")
variant_of = {"ofi": "libfabric"}          # Spack's name of the package libfabric
package_of = {"ofi": "libfabric"}
meson_args = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "meson_args")
feature_calls = [(c.args[0].value, c.args[1].value) for c in ast.walk(meson_args)
                 if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == "feature"]
for f in features:
    v = variant_of.get(f, f)
    vt.check(v in variants, f"feature {f}: variant +{v}")
    vt.check((package_of.get(f, f), f"+{v}") in deps, f"feature {f}: depends_on('{package_of.get(f, f)}', when='+{v}')")
    vt.check((v, f) in feature_calls, f"feature {f}: +{v} is passed to Meson as -D{f}=enabled/disabled")
vt.check(set(variants) == {variant_of.get(f, f) for f in features},
         f"no variant without a Meson feature ({sorted(variants)})")

# the run-time Python dependencies
py = open(os.path.join(ROOT, "reports", "pyproject.toml"), encoding="utf-8").read()
block = re.search(r"^dependencies\s*=\s*\[(.*?)\]", py, re.M | re.S).group(1)
wanted = sorted(re.findall(r'"([A-Za-z0-9_.-]+)', block))
for name in wanted:
    vt.check((f"py-{name.lower()}", None) in deps, f"Python dependency {name}: depends_on('py-{name.lower()}')")
vt.check(any(d[0] == "meson@0.63:" for d in deps), "meson at least the project's meson_version (0.63)")
print("spack recipe: parses; variants, dependencies and Meson features match the project")
