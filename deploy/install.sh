#!/usr/bin/env bash
# Installs pgwaitprof as a systemd service on a benchmark host, from a build tree:
#   /usr/local/bin/pgwaitprof                     the binary
#   /etc/pgwaitprof/pgwaitprof.yaml               the config (the example; an existing one is kept)
#   /etc/pgwaitprof/pgwaitprof.example.yaml       the current example, to compare with after upgrades
#   /etc/systemd/system/pgwaitprof.service        the unit
#   /var/lib/pgwaitprof                           the data dir (runs, control socket)
#   /usr/local/share/pgwaitprof/workloads         the built-in workload scripts
#   /usr/local/share/pgwaitprof/plans             the ready matrix plans (config/plans)
# As root with the default prefix "/" it also creates the system user "pgwaitprof" and reloads
# systemd; with --prefix DIR it only lays the files out under DIR (for packaging and tests).
# Running it again upgrades in place.
# The memory source (source: memory) needs CAP_SYS_PTRACE for the service user: the unit's
# comments show the drop-in that grants it; nothing here grants it by itself.
set -euo pipefail

usage() {
  cat <<EOF
usage: $(basename "$0") [--prefix DIR] [--config-example FILE] [BUILD_DIR | BINARY]

  BUILD_DIR         the CMake build directory holding daemon/pgwaitprof (default: ./build
                    of the source tree), or the pgwaitprof binary itself
  --prefix DIR      install under DIR instead of / (no user creation, no systemctl)
  --config-example FILE
                    the config installed when none exists
                    (default: config/pgwaitprof.example.yaml of the source tree)
EOF
}

die() {
  echo "install.sh: $*" >&2
  exit 1
}

source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prefix=/
build=$source_dir/build
config_example=$source_dir/config/pgwaitprof.example.yaml
while (($#)); do
  case "$1" in
    --prefix)
      (($# >= 2)) || die "--prefix needs a directory"
      prefix=$2
      shift 2
      ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    --config-example)
      (($# >= 2)) || die "--config-example needs a file"
      config_example=$2
      shift 2
      ;;
    --config-example=*) config_example=${1#--config-example=}; shift ;;
    -h | --help) usage; exit 0 ;;
    -*) usage >&2; die "unknown option \"$1\"" ;;
    *) build=$1; shift ;;
  esac
done

[[ -n $prefix ]] || die "--prefix must not be empty"
if [[ -f $build ]]; then
  binary=$build
else
  binary=$build/daemon/pgwaitprof
fi
[[ -f $binary && -x $binary ]] ||
  die "no pgwaitprof binary at \"$binary\"; build it first (cmake -B build && cmake --build build) or pass the build directory"
[[ -f $config_example ]] || die "no example config at \"$config_example\""
unit=$source_dir/deploy/systemd/pgwaitprof.service
[[ -f $unit ]] || die "no systemd unit at \"$unit\""

mkdir -p "$prefix"
root=$(cd "$prefix" && pwd -P)
system_install=false
if [[ $root == / ]]; then  # however it was spelt ("/", "//", "/.")
  root=
  system_install=true
  ((EUID == 0)) || die "installing into / needs root; run it with sudo, or pass --prefix DIR"
fi

bin_dir=$root/usr/local/bin
config_dir=$root/etc/pgwaitprof
unit_dir=$root/etc/systemd/system
data_dir=$root/var/lib/pgwaitprof
workloads_dir=$root/usr/local/share/pgwaitprof/workloads
plans_dir=$root/usr/local/share/pgwaitprof/plans

if $system_install && ! getent passwd pgwaitprof >/dev/null; then
  getent group pgwaitprof >/dev/null || groupadd --system pgwaitprof
  nologin=/usr/sbin/nologin
  [[ -x $nologin ]] || nologin=/sbin/nologin
  useradd --system --gid pgwaitprof --home-dir /var/lib/pgwaitprof --no-create-home \
    --shell "$nologin" --comment "pgwaitprof daemon" pgwaitprof
  echo "created system user pgwaitprof"
fi
if $system_install; then
  getent group pgwaitprof >/dev/null ||
    die "user pgwaitprof exists but group pgwaitprof does not; the unit runs as Group=pgwaitprof"
fi

# The binary: install(1) replaces the file instead of writing into it, so a running daemon is fine.
install -d -m 0755 "$bin_dir"
install -m 0755 "$binary" "$bin_dir/pgwaitprof"
echo "installed $bin_dir/pgwaitprof"

# The config may hold connection strings: readable by the service's group only.
install -d -m 0750 "$config_dir"
install -m 0640 "$config_example" "$config_dir/pgwaitprof.example.yaml"
if [[ -e $config_dir/pgwaitprof.yaml ]]; then
  echo "kept $config_dir/pgwaitprof.yaml (the new example is $config_dir/pgwaitprof.example.yaml)"
else
  install -m 0640 "$config_example" "$config_dir/pgwaitprof.yaml"
  echo "installed $config_dir/pgwaitprof.yaml"
fi

install -d -m 0755 "$unit_dir"
install -m 0644 "$unit" "$unit_dir/pgwaitprof.service"
echo "installed $unit_dir/pgwaitprof.service"

install -d -m 0750 "$data_dir"
echo "data directory $data_dir"

if [[ -d $source_dir/loadgen/workloads ]]; then
  # Replaced whole, so scripts removed from the source tree do not linger.
  rm -rf "$workloads_dir"
  install -d -m 0755 "$workloads_dir"
  cp -R "$source_dir/loadgen/workloads/." "$workloads_dir/"
  chmod -R u+rwX,go+rX,go-w "$workloads_dir"
  echo "installed $workloads_dir"
else
  echo "install.sh: warning: no workload scripts in \"$source_dir/loadgen/workloads\"; skipped" >&2
fi

if [[ -d $source_dir/config/plans ]]; then
  rm -rf "$plans_dir"
  install -d -m 0755 "$plans_dir"
  install -m 0644 "$source_dir"/config/plans/*.yaml "$plans_dir/"
  echo "installed $plans_dir"
fi

if $system_install; then
  chown root:pgwaitprof "$config_dir" "$config_dir/pgwaitprof.yaml" "$config_dir/pgwaitprof.example.yaml"
  chown pgwaitprof:pgwaitprof "$data_dir"
  if [[ -d /run/systemd/system ]] && command -v systemctl >/dev/null; then
    systemctl daemon-reload
    echo "reloaded systemd"
    if systemctl is-active --quiet pgwaitprof; then
      echo "pgwaitprof is running: restart it to use the new binary: systemctl restart pgwaitprof"
    else
      echo "next: edit /etc/pgwaitprof/pgwaitprof.yaml, then: systemctl enable --now pgwaitprof"
      echo "  (source: memory needs CAP_SYS_PTRACE: see the comments in $unit_dir/pgwaitprof.service)"
    fi
  else
    echo "systemd is not running here: start the daemon with" \
      "/usr/local/bin/pgwaitprof daemon -c /etc/pgwaitprof/pgwaitprof.yaml"
  fi
fi
