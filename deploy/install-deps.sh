#!/usr/bin/env bash
# Installs every Debian bookworm package pgwaitprof needs to build, test and run. Idempotent:
# apt-get runs only when a package is missing. Run as root (or with sudo available).
set -euo pipefail

packages=(
  # build
  build-essential cmake pkg-config git
  # faster builds: Ninja, and a compiler cache that the next build of the same sources reuses
  ninja-build ccache
  libpq-dev libssl-dev libasio-dev libspdlog-dev libfmt-dev prometheus-cpp-dev
  libyaml-cpp-dev
  nlohmann-json3-dev libcli11-dev googletest libgtest-dev libgmock-dev
  # the scalability model of a sweep: Eigen's Levenberg-Marquardt solver (header-only)
  libeigen3-dev
  # the CPU profile's symbols: elfutils' libdwfl
  libdw-dev
  # the traced source (collectors/trace/): its BPF programs compiled by clang for the BPF target,
  # their skeleton made by bpftool, loaded by libbpf
  libbpf-dev bpftool clang
  # the formatting check of deploy/test.sh
  clang-format
  # run: the scratch cluster, pgbench, and pg_wait_sampling to cross-check the sampler
  postgresql-15 postgresql-client-15 postgresql-15-pg-wait-sampling
  # `run --loadgen sysbench` and its integration tests (sysbench with its pgsql driver)
  sysbench
  # tests and deploy checks: real Prometheus and promtool, systemd-analyze, JSON/YAML/HTTP tools
  prometheus systemd curl jq python3 python3-yaml shellcheck procps
  # the test of a sampler on its own host (tests/integration/remote_sampler_test.sh): sshd in a
  # network namespace (iproute2 makes the namespaces and the veth pair), the ssh client
  openssh-server openssh-client iproute2
  # PostgreSQL 19 in a Debian sid root for the containers tests (deploy/sid-root.sh)
  debootstrap
  # the browser check of the HTML reports (ctest -L browser): headless Chromium
  chromium
  # the Debian package (deploy/package.sh, tests/deploy/package_test.sh): CPack needs
  # dpkg-shlibdeps (dpkg-dev), fakeroot and file; man pages from --help (help2man, man-db);
  # lintian; the completion's loader (bash-completion); report.json's schema (python3-jsonschema)
  dpkg-dev fakeroot file help2man man-db lintian bash-completion python3-jsonschema
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
# Node.js and npm for the dashboard's type check (tests/deploy/grafana_schema): Debian's, unless
# a node and npm are on the PATH already (NodeSource's nodejs bundles npm and conflicts with
# Debian's npm package, so the commands are what counts here, not the packages).
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages are installed"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: must run as root to install: ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
# The Debian postgresql package starts a "main" cluster; pgwaitprof never uses it.
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
