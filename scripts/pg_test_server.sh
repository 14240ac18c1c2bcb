#!/usr/bin/env bash
# A throwaway PostgreSQL 15 server for the tests: one cluster in DIR,
# listening on a Unix socket in DIR only (no TCP), trust authentication,
# fsync off. The tests read its URL from FLOWRAG_TEST_POSTGRES.
#
#   scripts/pg_test_server.sh start DIR   initdb into DIR/data, start the
#                                          server, create database
#                                          flowrag_test, print its URL
#   scripts/pg_test_server.sh url DIR     print the URL again
#   scripts/pg_test_server.sh stop DIR    stop the server, remove DIR
#
# The URL is postgresql://flowrag@/flowrag_test?host=DIR (superuser
# `flowrag`, no password). `start` on a DIR whose server is running prints
# the URL and changes nothing; a stale DIR of an earlier run is recreated.
# When a step fails the server is stopped, DIR removed and the server log
# printed, so nothing is left running.
#
# PostgreSQL refuses to run as root. As root, the cluster belongs to the
# system user FLOWRAG_PG_USER (default `flowrag-pg`, created with useradd
# when absent, `nobody` if that fails) and the server runs under runuser.
# Binaries: FLOWRAG_PG_BINDIR, else /usr/lib/postgresql/15/bin, else
# `pg_config --bindir`. FLOWRAG_PG_OPTIONS adds server options (for a
# profile: "-c shared_preload_libraries=pg_stat_statements").
set -euo pipefail

usage() {
  echo "usage: $0 start|stop|url DIR" >&2
  exit 2
}

[[ $# -eq 2 ]] || usage
cmd="$1"
dir="$(realpath -m -- "$2")"
marker="$dir/.flowrag-pg-test"
db="flowrag_test"
superuser="flowrag"
url="postgresql://${superuser}@/${db}?host=${dir}"

# libpq and the server read these; the socket in DIR is the only target.
unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGPASSWORD PGSERVICE PGOPTIONS PGDATA

find_bindir() {
  if [[ -n "${FLOWRAG_PG_BINDIR:-}" ]]; then
    echo "$FLOWRAG_PG_BINDIR"
  elif [[ -x /usr/lib/postgresql/15/bin/initdb ]]; then
    echo /usr/lib/postgresql/15/bin
  elif command -v pg_config >/dev/null && [[ -x "$(pg_config --bindir)/initdb" ]]; then
    pg_config --bindir
  else
    echo "$0: no PostgreSQL server binaries (initdb); install postgresql-15" >&2
    return 1
  fi
}

# The unprivileged user that owns the cluster ("" when not root: ourselves).
server_user() {
  if [[ $EUID -ne 0 ]]; then
    echo ""
    return
  fi
  local user="${FLOWRAG_PG_USER:-flowrag-pg}"
  if ! id -u "$user" >/dev/null 2>&1; then
    # A concurrent run may create it first: check again rather than fail.
    useradd --system --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin "$user" >/dev/null 2>&1 || true
    id -u "$user" >/dev/null 2>&1 || user=nobody
  fi
  echo "$user"
}

# Runs a server binary as the cluster's owner, from a directory it can read.
as_owner() {
  if [[ -n "$owner" ]]; then
    (cd / && runuser -u "$owner" -- "$@")
  else
    (cd / && "$@")
  fi
}

running() {
  [[ -f "$dir/data/postmaster.pid" ]] && as_owner "$bindir/pg_ctl" -D "$dir/data" status >/dev/null 2>&1
}

stop_server() {
  if [[ -f "$dir/data/postmaster.pid" ]]; then
    as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null 2>&1 ||
      as_owner "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
}

# Removes DIR, but only one this script made (never an arbitrary path).
remove_dir() {
  if [[ -f "$marker" ]]; then
    rm -rf -- "$dir"
  elif [[ -d "$dir" ]] && [[ -z "$(ls -A -- "$dir")" ]]; then
    rmdir -- "$dir"
  fi
}

# Runs on exit while a command's output may still be redirected to a log:
# reports on the stderr saved as fd 3.
start_failed() {
  local rc=$?
  trap - EXIT
  if [[ $rc -ne 0 ]]; then
    echo "$0: starting the test server in $dir failed" >&3
    if [[ -f "$dir/server.log" ]]; then
      tail -n 30 "$dir/server.log" >&3
    elif [[ -f "$dir/initdb.log" ]]; then
      tail -n 30 "$dir/initdb.log" >&3
    fi
    stop_server
    remove_dir
  fi
  exit $rc
}

bindir="$(find_bindir)"
owner="$(server_user)"

case "$cmd" in
  start)
    if running; then
      echo "$url"
      exit 0
    fi
    # Stale cluster of an earlier run (its server died): start afresh.
    stop_server
    if [[ -e "$dir" && ! -f "$marker" ]] && [[ -n "$(ls -A -- "$dir" 2>/dev/null)" ]]; then
      echo "$0: $dir exists and is not a test server directory; not touching it" >&2
      exit 1
    fi
    remove_dir
    # The socket path must fit sockaddr_un (107 bytes).
    if [[ ${#dir} -gt 90 ]]; then
      echo "$0: $dir is too long for a Unix socket path; use a shorter directory" >&2
      exit 1
    fi
    exec 3>&2
    trap start_failed EXIT
    mkdir -p -- "$dir"
    touch -- "$marker"
    chmod 0755 -- "$dir"
    [[ -n "$owner" ]] && chown "$owner" -- "$dir"
    as_owner "$bindir/initdb" -D "$dir/data" --auth=trust -U "$superuser" --encoding=UTF8 \
      --locale=C --no-sync >"$dir/initdb.log" 2>&1
    as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses='' -k $dir -c fsync=off -c max_connections=100 ${FLOWRAG_PG_OPTIONS:-}" \
      start >/dev/null
    "$bindir/createdb" -h "$dir" -U "$superuser" "$db"
    trap - EXIT
    echo "$url"
    ;;
  url)
    echo "$url"
    ;;
  stop)
    stop_server
    remove_dir
    ;;
  *)
    usage
    ;;
esac
