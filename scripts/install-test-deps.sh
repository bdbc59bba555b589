#!/usr/bin/env bash
# Installs the Debian packages that waitcmd's service tests start for real
# (sshd, dnsmasq, dockerd, docker-compose, a systemd user manager, openssl),
# and creates the throwaway ssh user the sshd tests log in as.
#
# Idempotent and fast when everything is present: packages are checked with
# `dpkg -s` first and apt is only run for what is missing. Never starts the
# system services those packages ship (sshd on :22, dockerd, ...): the tests
# start their own instances on loopback ports in temporary directories.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

PACKAGES=(
  openssh-server     # sshd for the ssh kind
  openssh-client     # ssh-keygen (host keys, fingerprints)
  dnsmasq-base       # dnsmasq binary without a system service
  docker.io          # dockerd + docker CLI
  busybox-static     # static busybox for FROM-scratch test images
  docker-compose     # compose for the container kind
  systemd            # user manager for the svcmgr kind
  dbus               # dbus-daemon
  dbus-user-session  # user bus for systemd --user
  openssl            # CA / leaf certificates
  iproute2           # ss, ip
  procps             # ps, pkill for debugging
  ruby               # loads the generated Homebrew formula in tests/release
  dash               # install.sh is tested under a POSIX sh
  unzip              # reads the windows release archive back
  zip                # makes the zip archives of the archive kind's tests
  util-linux         # script (terminal tests), setpriv (installer as non-root)
  curl               # install.sh downloads
  wget               # install.sh fallback downloader
  time               # /usr/bin/time -v for peak RSS in benchmarks
  zsh                # runs the generated zsh completion script in tests/e2e
  fish               # runs the generated fish completion script in tests/e2e
  shellcheck         # lints the generated bash completion script in tests/e2e
  chrony             # chronyd: a real NTP server for the ntp kind (run with -x, never the system clock)
  iputils-ping       # the system ping the icmp kind runs
  python3-venv       # the venv of Python's websockets server for the websocket kind (build-pyws.sh)
  rabbitmq-server    # RabbitMQ broker for the rabbitmq kind (run per test run, not as a service)
  openjdk-17-jdk-headless # java/javac: Kafka and the MongoDB protocol stand-in (scripts/services)
  maven              # fetches the Kafka and mongo-java-server jars from Maven Central
  postgresql         # PostgreSQL 15 for the postgres kind (throwaway instances, not the service)
  mariadb-server     # MariaDB 10.11 for the mysql kind (throwaway instances)
  redis-server       # Redis 7 for the redis kind (throwaway instances)
  nats-server        # nats-server 2.9 for the nats kind (throwaway instances, not the service)
  influxdb           # influxd 1.6 for the influxdb kind (throwaway instances, not the service)
  libfaketime        # libfaketime.so.1: wall-clock jumps under LD_PRELOAD (tests/faults/clock_dns_test.ts)
)

if [ "$(id -u)" -ne 0 ]; then
  echo "install-test-deps: must run as root" >&2
  exit 1
fi

missing=()
for p in "${PACKAGES[@]}"; do
  status=$(dpkg -s "$p" 2>/dev/null || true)
  if ! grep -q '^Status: install ok installed' <<<"$status"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-test-deps: installing: ${missing[*]}"
  # Keep maintainer scripts from starting system services (there is no
  # systemd PID 1 here; invoke-rc.d would start sshd on :22 and a system
  # dockerd). Honour an existing policy-rc.d; otherwise add one for the
  # duration of the install.
  made_policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    made_policy=1
  fi
  cleanup() { if [ -n "$made_policy" ]; then rm -f /usr/sbin/policy-rc.d; fi; }
  trap cleanup EXIT
  apt-get update -qq
  apt-get install -y --no-install-recommends -o Dpkg::Options::=--force-confdef \
    -o Dpkg::Options::=--force-confold "${missing[@]}"
  cleanup
  trap - EXIT
else
  echo "install-test-deps: all ${#PACKAGES[@]} packages already installed"
fi

# sshd refuses to start without its privilege-separation directory.
mkdir -p /run/sshd
chmod 755 /run/sshd

# Throwaway user the sshd tests authenticate as (password auth).
if ! id waittest >/dev/null 2>&1; then
  echo "install-test-deps: creating user waittest"
  useradd -m -s /bin/sh waittest
  echo 'waittest:s3cret' | chpasswd
fi
