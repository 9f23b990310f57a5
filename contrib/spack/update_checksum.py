#!/usr/bin/env python3
"""Record a release tarball in the Spack recipe: its version and sha256.

    contrib/spack/update_checksum.py build/meson-dist/versus-0.2.0.tar.gz

The tarball is the one `meson dist --formats gztar` makes (versus-<version>.tar.gz, every
file under versus-<version>/).  The script checks that the name, the top directory and the
project version in its meson.build agree, then rewrites the recipe's version("<version>", ...)
line with the tarball's sha256, or adds that line above the others when the version is new.
Only the standard library is needed.  Exit status: 0 done (or already recorded), 2 bad input.
"""
import argparse
import hashlib
import os
import re
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
RECIPE = os.path.join(HERE, "packages", "versus", "package.py")
NAME = re.compile(r"^versus-(\d+(?:\.\d+)*)\.tar\.gz$")
VERSION_LINE = re.compile(r'^(?P<indent>[ \t]*)version\(\s*"(?P<version>[^"]+)"\s*,'
                          r'\s*sha256="(?P<sha>[0-9a-fA-F]*)"\s*\)[ \t]*$', re.M)


class BadInput(Exception):
    pass


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def tarball_version(path):
    """The version a release tarball carries, after checking its name and contents agree."""
    m = NAME.match(os.path.basename(path))
    if not m:
        raise BadInput(f"{path}: not a release tarball name (versus-<version>.tar.gz, as meson dist makes it)")
    version = m.group(1)
    top = f"versus-{version}"
    try:
        with tarfile.open(path, "r:gz") as tar:
            names = tar.getnames()
            outside = [n for n in names if n != top and not n.startswith(top + "/")]
            if outside:
                raise BadInput(f"{path}: {outside[0]} is not under {top}/")
            try:
                member = tar.extractfile(f"{top}/meson.build")
            except KeyError:
                member = None
            if member is None:
                raise BadInput(f"{path}: no {top}/meson.build")
            head = member.read(4096).decode("utf-8", "replace")
    except (OSError, tarfile.TarError, EOFError) as ex:
        raise BadInput(f"{path}: not a readable .tar.gz ({ex})")
    pm = re.search(r"project\(\s*'versus'.*?version:\s*'([^']+)'", head, re.S)
    if not pm:
        raise BadInput(f"{path}: {top}/meson.build has no project('versus', version: ...)")
    if pm.group(1) != version:
        raise BadInput(f"{path}: named {version} but its meson.build says version {pm.group(1)}")
    return version


def update(recipe_text, version, sha):
    """The recipe with version(version) recorded as sha; and what was done."""
    lines = list(VERSION_LINE.finditer(recipe_text))
    if not lines:
        raise BadInput("the recipe has no version(\"...\", sha256=\"...\") line to go by")
    same = [m for m in lines if m.group("version") == version]
    if same:
        m = same[0]
        if m.group("sha").lower() == sha:
            return recipe_text, f"versus {version}: already recorded with sha256 {sha}"
        start, end = m.span("sha")
        return recipe_text[:start] + sha + recipe_text[end:], f"versus {version}: sha256 now {sha}"
    first = lines[0]
    new = f'{first.group("indent")}version("{version}", sha256="{sha}")\n'
    at = first.start()
    return recipe_text[:at] + new + recipe_text[at:], f"versus {version}: added with sha256 {sha}"


def main(argv=None):
    ap = argparse.ArgumentParser(description="Record a release tarball (made by meson dist) in the Spack recipe.")
    ap.add_argument("tarball", help="versus-<version>.tar.gz as `meson dist --formats gztar` makes it")
    ap.add_argument("--recipe", default=RECIPE, help="the package.py to rewrite (default: this repository's)")
    a = ap.parse_args(argv)
    try:
        if not os.path.isfile(a.tarball):
            raise BadInput(f"{a.tarball}: no such file")
        version = tarball_version(a.tarball)
        try:
            with open(a.recipe, encoding="utf-8") as f:
                text = f.read()
        except OSError as ex:
            raise BadInput(f"{a.recipe}: cannot read the recipe ({ex.strerror})")
        text, said = update(text, version, sha256_of(a.tarball))
        try:
            with open(a.recipe, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as ex:
            raise BadInput(f"{a.recipe}: cannot write the recipe ({ex.strerror})")
    except BadInput as ex:
        print(f"update_checksum: {ex}", file=sys.stderr)
        return 2
    print(said)
    return 0


if __name__ == "__main__":
    sys.exit(main())
