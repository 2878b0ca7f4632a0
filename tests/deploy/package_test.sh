#!/usr/bin/env bash
# The Debian package on this machine, as a benchmark host gets it (issue 28):
#   lintian (no errors; its warnings are printed), `apt-get install ./pgwaitprof_*.deb`, the
#   files, the user, the data directory and the conffile; `pgwaitprof --version` against the
#   package's version; `man -w`; the bash completion (subcommands, explain's event names);
#   deploy/install.sh --no-package into a temporary prefix; a short `pgwaitprof run` of the packaged
#   binary against the scratch cluster (PG* variables), its report.json validated against the
#   installed schema; a reinstall over itself (dpkg's upgrade path) keeping an edited config;
#   `apt-get remove` (config and runs stay) and `apt-get purge` (both go; the system user stays,
#   as Debian's packages leave theirs).
# It changes the machine, so it runs as root only, refuses when pgwaitprof is installed already,
# and purges the package and deletes the user it created on any exit. One at a time (a lock).
#   package_test.sh DEB_DIR BINARY    DEB_DIR holds pgwaitprof_*.deb (deploy/package.sh), which
#                                     must be newer than BINARY, the build's program
# Prints one line per check and "N passed, N failed"; exits 1 if any check failed, 77 (skipped)
# when not root.
# shellcheck disable=SC2016  # the checks run by `bash -c '...'` expand in that shell
set -euo pipefail

deb_dir=$1
binary=$2
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../support/cluster_slot.sh source-path=SCRIPTDIR
source "$script_dir/../support/cluster_slot.sh"

if ((EUID != 0)); then
  echo "package_test: skipped: installs a package, needs root"
  exit 77
fi
exec 9>/run/lock/pgwaitprof-package-test.lock
flock 9

passed=0
failed=0
pass() { printf 'ok    %s\n' "$1"; passed=$((passed + 1)); }
fail() {
  printf 'FAIL  %s\n' "$1"
  if [[ -n ${2:-} ]]; then printf '%s\n' "$2" | sed 's/^/      /'; fi
  failed=$((failed + 1))
}
# check NAME COMMAND...: passes if the command exits 0, else fails showing its output.
check() {
  local name=$1 output
  shift
  if output=$("$@" 2>&1); then pass "$name"; else fail "$name" "$output"; fi
}
finish() {
  echo "package_test: $passed passed, $failed failed"
  ((failed == 0))
}

shopt -s nullglob
debs=("$deb_dir"/pgwaitprof_*.deb)
if ((${#debs[@]} != 1)); then
  fail "one package in $deb_dir" "found ${#debs[@]}: build it with deploy/package.sh"
  finish
  exit 1
fi
deb=${debs[0]}
if [[ $binary -nt $deb ]]; then
  fail "the package is newer than the build's program" "$deb is older than $binary: run deploy/package.sh"
  finish
  exit 1
fi
# Whether dpkg knows the package (installed, or removed with its config left).
package_known() {
  local status
  status=$(dpkg-query -W -f='${db:Status-Status}' pgwaitprof 2>/dev/null || true)
  [[ -n $status && $status != not-installed ]]
}
if package_known; then
  fail "pgwaitprof is not installed yet" "the test would remove an installed pgwaitprof: not touching it"
  finish
  exit 1
fi
user_existed=false
getent passwd pgwaitprof >/dev/null && user_existed=true

# A data directory before the package is a test or a run that wrote to the system's (the
# daemon's default data_dir): said, with what it holds, so that it can be found (issue 47).
if [[ -e /var/lib/pgwaitprof ]]; then
  printf 'info  /var/lib/pgwaitprof exists before the install (%s, modified %s): %s\n' \
    "$(stat -c '%U:%G %a' /var/lib/pgwaitprof)" "$(stat -c '%y' /var/lib/pgwaitprof)" \
    "$(find /var/lib/pgwaitprof -mindepth 1 -maxdepth 1 -printf '%f ' | head -c 200)"
fi

work_dir=$(mktemp -d "${TMPDIR:-/tmp}/pgwaitprof-package-test.XXXXXX")
export DEBIAN_FRONTEND=noninteractive
apt_quiet=(-y -q -o Dpkg::Use-Pty=0)
# shellcheck disable=SC2317  # called by the EXIT trap
clean_up() {
  if package_known; then
    apt-get purge "${apt_quiet[@]}" pgwaitprof >/dev/null 2>&1 || dpkg --purge pgwaitprof >/dev/null 2>&1 || true
  fi
  if ! $user_existed && getent passwd pgwaitprof >/dev/null; then userdel pgwaitprof || true; fi
  if ! $user_existed && getent group pgwaitprof >/dev/null; then groupdel pgwaitprof || true; fi
  rm -rf "$work_dir"
}
trap clean_up EXIT

# --- lintian -----------------------------------------------------------------------------------
started=$(date +%s%N)
if lintian_output=$(lintian --fail-on error --display-level ">=warning" "$deb" 2>&1); then
  pass "lintian: no errors ($((($(date +%s%N) - started) / 1000000)) ms)"
else
  fail "lintian: no errors" "$lintian_output"
fi
if [[ -n $lintian_output ]]; then
  printf 'info  lintian says:\n      %s\n' "${lintian_output//$'\n'/$'\n'      }"
fi

# --- install -----------------------------------------------------------------------------------
check "apt-get install ./$(basename "$deb")" apt-get install "${apt_quiet[@]}" "$(realpath "$deb")"

version=$(dpkg-query -W -f='${Version}' pgwaitprof 2>/dev/null || true)
version_output=$(/usr/bin/pgwaitprof --version 2>&1 || true)
if [[ $(sed -n 1p <<<"$version_output") == "pgwaitprof $version" &&
  $(sed -n 2p <<<"$version_output") =~ ^revision\ [0-9a-f]{12}$ &&
  $(sed -n 3p <<<"$version_output") =~ ^libpq\ [0-9]+\.[0-9]+ ]]; then
  pass "pgwaitprof --version: the package's version $version, a revision, libpq"
else
  fail "pgwaitprof --version: the package's version $version, a revision, libpq" "$version_output"
fi

missing=()
for file in /usr/bin/pgwaitprof /etc/pgwaitprof/pgwaitprof.yaml /lib/systemd/system/pgwaitprof.service \
  /usr/share/pgwaitprof/plans/clients-sweep.yaml /usr/share/pgwaitprof/workloads/tpcb_func.pgbench \
  /usr/share/pgwaitprof/grafana/pgwaitprof.json /usr/share/pgwaitprof/prometheus/rules.yml \
  /usr/share/pgwaitprof/schema/report.schema.json /usr/share/pgwaitprof/schema/matrix.schema.json \
  /usr/share/pgwaitprof/examples/pgwaitprof.example.yaml /usr/share/doc/pgwaitprof/copyright \
  /usr/share/bash-completion/completions/pgwaitprof; do
  [[ -f $file ]] || missing+=("$file")
done
if ((${#missing[@]})); then fail "the package's files are installed" "missing: ${missing[*]}"; else
  pass "the package's files are installed"
fi
check "the unit starts /usr/bin/pgwaitprof" \
  grep -qxF "ExecStart=/usr/bin/pgwaitprof daemon -c /etc/pgwaitprof/pgwaitprof.yaml" \
  /lib/systemd/system/pgwaitprof.service
check "the config is a conffile" \
  bash -c "dpkg-query -W -f='\${Conffiles}' pgwaitprof | grep -q '^ /etc/pgwaitprof/pgwaitprof.yaml '"
check "the config is root:pgwaitprof 0640" \
  bash -c '[[ $(stat -c "%U:%G %a" /etc/pgwaitprof/pgwaitprof.yaml) == "root:pgwaitprof 640" ]]'
check "system user pgwaitprof, home /var/lib/pgwaitprof, no login" \
  bash -c 'IFS=: read -r _ _ uid _ _ home shell < <(getent passwd pgwaitprof) &&
    ((uid < 1000)) && [[ $home == /var/lib/pgwaitprof && $shell == /usr/sbin/nologin ]]'
check "/var/lib/pgwaitprof is pgwaitprof:pgwaitprof 0750" \
  bash -c '[[ $(stat -c "%U:%G %a" /var/lib/pgwaitprof) == "pgwaitprof:pgwaitprof 750" ]]'
check "man -w pgwaitprof" man -w pgwaitprof
check "man -w pgwaitprof-run" man -w pgwaitprof-run
check "man pgwaitprof renders the subcommands" \
  bash -c 'MANWIDTH=100 man -P cat pgwaitprof 2>/dev/null | grep -q "matrix"'
check "bash completion completes the subcommands" \
  bash -c 'source /usr/share/bash-completion/completions/pgwaitprof &&
    COMP_WORDS=(pgwaitprof ma) COMP_CWORD=1 COMP_LINE="pgwaitprof ma" COMP_POINT=13 &&
    _pgwaitprof pgwaitprof ma pgwaitprof && [[ " ${COMPREPLY[*]} " == *" matrix "* ]]'
check "bash completion completes explain's event names" \
  bash -c 'source /usr/share/bash-completion/completions/pgwaitprof &&
    COMP_WORDS=(pgwaitprof explain WALWr) COMP_CWORD=2 &&
    _pgwaitprof pgwaitprof WALWr explain && [[ " ${COMPREPLY[*]} " == *" WALWriteLock "* ]]'
# Without the package: the program, its man pages and completion under a prefix of one's own.
prefix=$(mktemp -d)
check "install.sh --no-package PREFIX: the program, its man pages and its completion" \
  bash -c 'BUILD_DIR=$(dirname "$(dirname "$1")") "$2/../../deploy/install.sh" --no-package "$3" &&
    [[ -x $3/bin/pgwaitprof && -f $3/share/man/man1/pgwaitprof-run.1.gz &&
      -f $3/share/bash-completion/completions/pgwaitprof ]]' _ "$binary" "$script_dir" "$prefix"
rm -rf "$prefix"

# --- a run of the packaged binary ----------------------------------------------------------------
# As root into the service's data directory (the cluster's socket directory is the server's
# only), so that remove and purge have runs to keep and to delete.
target="host=$PGHOST port=$PGPORT user=$PGUSER dbname=$PGDATABASE"
if run_output=$(/usr/bin/pgwaitprof run "$target" --data-dir /var/lib/pgwaitprof --no-daemon \
  --hz 50 --label package-test -- -T 2 -c 2 2>&1); then
  pass "pgwaitprof run of the packaged binary"
else
  fail "pgwaitprof run of the packaged binary" "$run_output"
fi
reports=(/var/lib/pgwaitprof/runs/*/report.json)
if ((${#reports[@]} == 1)); then
  check "its report.json validates against /usr/share/pgwaitprof/schema" \
    python3 "$script_dir/validate_json.py" /usr/share/pgwaitprof/schema "${reports[0]}"
else
  fail "the run wrote one report.json" "found ${#reports[@]} in /var/lib/pgwaitprof/runs"
fi

# --- over itself, with an edited config ------------------------------------------------------------
echo "# edited by the package test" >>/etc/pgwaitprof/pgwaitprof.yaml
# The data directory as root's daemon or run with the default data_dir leaves it (postinst
# kept such a one as it was, and the service could not write to it).
chown root:root /var/lib/pgwaitprof
chmod 0755 /var/lib/pgwaitprof
check "apt-get install --reinstall (upgrade path)" \
  apt-get install --reinstall "${apt_quiet[@]}" "$(realpath "$deb")"
check "an existing /var/lib/pgwaitprof of root's is made pgwaitprof:pgwaitprof 0750" \
  bash -c '[[ $(stat -c "%U:%G %a" /var/lib/pgwaitprof) == "pgwaitprof:pgwaitprof 750" ]]'
check "the edited config is kept" grep -qxF "# edited by the package test" /etc/pgwaitprof/pgwaitprof.yaml
check "the config is still root:pgwaitprof 0640" \
  bash -c '[[ $(stat -c "%U:%G %a" /etc/pgwaitprof/pgwaitprof.yaml) == "root:pgwaitprof 640" ]]'
check "the runs are kept" test -f "${reports[0]:-/nonexistent}"

# --- remove, then purge ------------------------------------------------------------------------
check "apt-get remove pgwaitprof" apt-get remove "${apt_quiet[@]}" pgwaitprof
check "removed: no /usr/bin/pgwaitprof, no unit, no man page" \
  bash -c '! [[ -e /usr/bin/pgwaitprof || -e /lib/systemd/system/pgwaitprof.service ]] && ! man -w pgwaitprof'
check "removed: the edited config, the runs and the user stay" \
  bash -c "grep -qxF '# edited by the package test' /etc/pgwaitprof/pgwaitprof.yaml &&
    test -f '${reports[0]:-/nonexistent}' && getent passwd pgwaitprof >/dev/null"
check "apt-get purge pgwaitprof" apt-get purge "${apt_quiet[@]}" pgwaitprof
check "purged: no /etc/pgwaitprof, no /var/lib/pgwaitprof, no statoverride, no package" \
  bash -c '! [[ -e /etc/pgwaitprof || -e /var/lib/pgwaitprof ]] &&
    ! dpkg-statoverride --list /etc/pgwaitprof/pgwaitprof.yaml >/dev/null'
if package_known; then fail "purged: dpkg no longer knows the package" "$(dpkg -l pgwaitprof | tail -1)"; else
  pass "purged: dpkg no longer knows the package"
fi
check "purged: the system user stays (Debian leaves system users)" getent passwd pgwaitprof

finish
