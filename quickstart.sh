#!/usr/bin/env bash
# versus quickstart on Debian 12: installs what is missing (Debian packages,
# a Python virtual environment, the Meson build), then
#   ./quickstart.sh demo   runs the local comparison of every transport built here
#                          and writes report/index.html and report/report.tex
#   ./quickstart.sh test   runs the whole test suite (meson test)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
build=${VERSUS_BUILD_DIR:-build}
venv=${VERSUS_VENV:-.venv}

packages=(
  build-essential meson ninja-build pkg-config git
  libopenmpi-dev openmpi-bin libmpich-dev mpich
  libucx-dev ucx-utils libfabric-dev libfabric-bin libhwloc-dev hwloc
  python3 python3-venv python3-dev
  netpipe-tcp netpipe-openmpi procps iproute2 util-linux slurm-wlm munge clang libclang-rt-dev help2man man-db
  lmod bash-completion
  texlive-latex-base texlive-latex-recommended texlive-latex-extra poppler-utils chromium
)

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

install_packages() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing Debian packages: ${missing[*]}"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
  fi
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

setup_python() {
  if [ ! -x "$venv/bin/python" ]; then
    say "creating the Python virtual environment $venv"
    python3 -m venv "$venv"
  fi
  if ! "$venv/bin/python" -c 'import versus, pytest, hypothesis' 2>/dev/null || [ reports/pyproject.toml -nt "$venv/.versus-installed" ]; then
    say "installing the versus Python package and its dependencies"
    "$venv/bin/pip" install -q --upgrade pip
    "$venv/bin/pip" install -q -e 'reports[test]'
    touch "$venv/.versus-installed"
  fi
}

# The sanitizer and fuzzing build: clang with ASan and UBSan, the libFuzzer harnesses.
asan=${VERSUS_ASAN_BUILD_DIR:-build-asan}
setup_asan_build() {
  if [ ! -f "$asan/build.ninja" ]; then
    say "configuring the sanitizer build in $asan (clang, ASan + UBSan, fuzz harnesses)"
    CC=clang meson setup "$asan" -Db_sanitize=address,undefined -Db_lundef=false -Dfuzz=true \
      -Dpython="$here/$venv/bin/python"
  fi
  ninja -C "$asan"
}

setup_build() {
  if [ ! -f "$build/build.ninja" ]; then
    say "configuring the Meson build in $build"
    meson setup "$build" -Dpython="$here/$venv/bin/python"
  fi
  say "building"
  ninja -C "$build"
}

# Open MPI refuses to run as root unless told; versus runs its own launches.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

cmd=${1:-}
case "$cmd" in
  demo|test) ;;
  *) echo "usage: $0 demo|test" >&2; exit 2 ;;
esac

install_packages
setup_python
setup_build
export PATH="$here/$build/core:$here/$venv/bin:$PATH"

if [ "$cmd" = test ]; then
  say "running the test suite"
  meson test -C "$build" --print-errorlogs --num-processes 1
  say "the C unit tests, shm, tcp, launch, methodology and pattern suites under ASan and UBSan; the fuzzers"
  setup_asan_build
  VERSUS_FUZZ_SECONDS=${VERSUS_FUZZ_SECONDS:-5} exec meson test -C "$asan" --setup asan --print-errorlogs \
    --num-processes 2 --suite core --suite shm --suite tcp --suite launch --suite methodology \
    --suite patterns --suite fuzz --no-suite timing
fi

say "local comparison of every transport built here"
exec "$venv/bin/versus" campaign configs/local.toml --results results/local --report report
