#!/usr/bin/env bash
# Start this machine's PostgreSQL and Redis if they are not running, and make sure the
# Debian packages the test suite needs (chromium for the browser tests; bubblewrap, util-linux and
# g++ for the sandbox of generated code) are installed.
set -euo pipefail

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

apt_ready=0
apt_install() {
  if [ "$apt_ready" = 0 ]; then as_root apt-get update -qq; apt_ready=1; fi
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

command -v chromium >/dev/null 2>&1 || apt_install chromium fonts-dejavu-core
command -v pg_ctlcluster >/dev/null 2>&1 || apt_install postgresql
command -v redis-server >/dev/null 2>&1 || apt_install redis-server
command -v bwrap >/dev/null 2>&1 || apt_install bubblewrap
command -v g++ >/dev/null 2>&1 || apt_install g++
{ command -v prlimit && command -v setpriv; } >/dev/null 2>&1 || apt_install util-linux

if ! pg_isready -q -h 127.0.0.1 -p 5432; then
  for v in $(ls /etc/postgresql); do as_root pg_ctlcluster --skip-systemctl-redirect "$v" main start || true; done
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
fi
pg_isready -h 127.0.0.1 -p 5432

if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 1; done
fi
redis-cli -h 127.0.0.1 -p 6379 ping
