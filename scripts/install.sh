#!/bin/sh
# waitcmd installer: downloads a release archive for this OS and CPU, checks
# its SHA-256 against the release's SHA256SUMS, and installs `waitcmd`.
#
#   curl -fsSL https://github.com/waitcmd/waitcmd/releases/latest/download/install.sh | sh
#   curl -fsSL .../install.sh | sh -s -- --version 0.1.0 --prefix "$HOME/.local"
#
# Options:
#   --version X      install version X (default: the latest release)
#   --prefix DIR     install into DIR/bin
#   --bin-dir DIR    install into DIR
#   -h, --help       show this help
# Environment:
#   WAITCMD_VERSION       like --version
#   WAITCMD_INSTALL_DIR   like --bin-dir (the options win)
#   WAITCMD_BASE_URL      where releases live: <base>/v<version>/<file>
#                         (default https://github.com/waitcmd/waitcmd/releases/download)
#   WAITCMD_LATEST_URL    where the latest release's files live (default: GitHub's
#                         releases/latest/download, or <WAITCMD_BASE_URL>/latest)
#   WAITCMD_SYSTEM_BIN_DIR  the default system directory (default /usr/local/bin);
#                         when it is not writable, ~/.local/bin is used instead
#   WAITCMD_DOWNLOADER    curl or wget (default: whichever exists, curl first)
#
# Nothing is installed unless the checksum matches and the binary runs: the
# archive is unpacked in a temporary directory, the binary is staged next to
# its destination and moved into place in one rename. Running it again with
# the same version changes nothing.
#
# Everything is inside main(), called on the last line, so a download cut
# short never runs half a script.

set -u

say() { printf '%s\n' "waitcmd-install: $*"; }
die() {
  printf '%s\n' "waitcmd-install: error: $*" >&2
  exit 1
}
usage_error() {
  printf '%s\n' "waitcmd-install: error: $* (see: install.sh --help)" >&2
  exit 2
}

help_text() {
  cat <<'EOF'
waitcmd installer

usage: install.sh [--version X] [--prefix DIR | --bin-dir DIR]
  curl -fsSL https://github.com/waitcmd/waitcmd/releases/latest/download/install.sh | sh
  curl -fsSL .../install.sh | sh -s -- --version 0.1.0

  --version X     install version X (default: the latest release)
  --prefix DIR    install into DIR/bin
  --bin-dir DIR   install into DIR (also: WAITCMD_INSTALL_DIR)
  -h, --help      show this help

Default directory: /usr/local/bin when writable, else ~/.local/bin.
Environment: WAITCMD_VERSION, WAITCMD_INSTALL_DIR, WAITCMD_BASE_URL,
WAITCMD_LATEST_URL, WAITCMD_SYSTEM_BIN_DIR, WAITCMD_DOWNLOADER (curl|wget).
EOF
}

# download URL FILE: fetches URL into FILE; returns non-zero on any failure (404 included).
download() {
  case "$downloader" in
    curl) curl -fsSL --retry 2 -o "$2" "$1" 2>/dev/null ;;
    wget) wget -q -O "$2" "$1" 2>/dev/null ;;
  esac
}

# sha256_of FILE: prints the lower-case hex SHA-256 of FILE.
sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d ' ' -f 1
  elif command -v openssl >/dev/null 2>&1; then
    openssl dgst -sha256 -r "$1" | cut -d ' ' -f 1
  else
    return 1
  fi
}

# same_file A B: true when both files have the same bytes.
same_file() {
  if command -v cmp >/dev/null 2>&1; then
    cmp -s "$1" "$2"
  else
    [ "$(sha256_of "$1")" = "$(sha256_of "$2")" ]
  fi
}

# detect_target: prints the release target of this machine (e.g. x86_64-unknown-linux-gnu).
detect_target() {
  os=$(uname -s 2>/dev/null) || die "cannot run uname to detect the operating system"
  arch=$(uname -m 2>/dev/null) || die "cannot run uname to detect the CPU"
  case "$arch" in
    x86_64 | amd64 | x64) cpu=x86_64 ;;
    aarch64 | arm64 | armv8*) cpu=aarch64 ;;
    *) die "unsupported CPU \"$arch\": waitcmd is built for x86_64 and aarch64 (arm64)" ;;
  esac
  case "$os" in
    Linux)
      if [ -e /lib/ld-musl-x86_64.so.1 ] || [ -e /lib/ld-musl-aarch64.so.1 ]; then
        if ! { [ -e /lib64/ld-linux-x86-64.so.2 ] || [ -e /lib/ld-linux-aarch64.so.1 ]; }; then
          die "this Linux uses musl libc (Alpine?), and waitcmd's Linux binaries need glibc: use a glibc-based system or image (e.g. debian:bookworm-slim), or the waitcmd container image"
        fi
      fi
      printf '%s\n' "$cpu-unknown-linux-gnu"
      ;;
    Darwin)
      # An x86_64 shell under Rosetta 2 on Apple silicon: prefer the native build.
      if [ "$cpu" = x86_64 ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null)" = 1 ]; then
        cpu=aarch64
      fi
      printf '%s\n' "$cpu-apple-darwin"
      ;;
    MINGW* | MSYS* | CYGWIN* | Windows_NT)
      die "on Windows, download waitcmd-<version>-x86_64-pc-windows-msvc.zip from the releases page (this script installs on Linux and macOS)"
      ;;
    *) die "unsupported operating system \"$os\": waitcmd is built for Linux and macOS (and Windows, as a zip)" ;;
  esac
}

# on_path DIR: true when DIR is one of $PATH's entries.
on_path() {
  case ":${PATH:-}:" in
    *":$1:"* | *":$1/:"*) return 0 ;;
    *) return 1 ;;
  esac
}

cleanup() {
  if [ -n "${stage:-}" ]; then rm -f "$stage"; fi
  if [ -n "${tmp:-}" ]; then rm -rf "$tmp"; fi
}

main() {
  version=${WAITCMD_VERSION:-}
  prefix=
  bin_dir=
  while [ $# -gt 0 ]; do
    case "$1" in
      --version | --prefix | --bin-dir)
        if [ $# -lt 2 ] || [ -z "$2" ]; then usage_error "$1 needs a value"; fi
        case "$1" in
          --version) version=$2 ;;
          --prefix) prefix=$2 ;;
          *) bin_dir=$2 ;;
        esac
        shift 2
        ;;
      --version=*)
        version=${1#--version=}
        shift
        ;;
      --prefix=*)
        prefix=${1#--prefix=}
        shift
        ;;
      --bin-dir=*)
        bin_dir=${1#--bin-dir=}
        shift
        ;;
      -h | --help)
        help_text
        exit 0
        ;;
      *) usage_error "unknown argument \"$1\"" ;;
    esac
  done
  if [ -n "$prefix" ] && [ -n "$bin_dir" ]; then
    usage_error "--prefix and --bin-dir are alternatives: give one"
  fi
  version=${version#v}
  case "$version" in
    "" | latest) version= ;;
    *[!0-9A-Za-z.+-]*) usage_error "--version: expected a version like 0.1.0, got \"$version\"" ;;
  esac

  # Tools
  case "${WAITCMD_DOWNLOADER:-}" in
    "")
      if command -v curl >/dev/null 2>&1; then
        downloader=curl
      elif command -v wget >/dev/null 2>&1; then
        downloader=wget
      else
        die "neither curl nor wget is installed: install one of them and run this again"
      fi
      ;;
    curl | wget)
      downloader=$WAITCMD_DOWNLOADER
      command -v "$downloader" >/dev/null 2>&1 || die "WAITCMD_DOWNLOADER=$downloader, but $downloader is not installed"
      ;;
    *) usage_error "WAITCMD_DOWNLOADER: expected curl or wget, got \"$WAITCMD_DOWNLOADER\"" ;;
  esac
  for tool in tar gzip mktemp; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool is needed to unpack the release archive, and it is not installed"
  done

  target=$(detect_target) || exit 1

  base=${WAITCMD_BASE_URL:-https://github.com/waitcmd/waitcmd/releases/download}
  base=${base%/}
  if [ -n "${WAITCMD_LATEST_URL:-}" ]; then
    latest=${WAITCMD_LATEST_URL%/}
  elif [ -n "${WAITCMD_BASE_URL:-}" ]; then
    latest=$base/latest
  else
    latest=https://github.com/waitcmd/waitcmd/releases/latest/download
  fi

  tmp=$(mktemp -d 2>/dev/null || mktemp -d -t waitcmd-install) || die "cannot create a temporary directory"
  stage=
  trap cleanup EXIT
  trap 'cleanup; exit 130' INT
  trap 'cleanup; exit 143' TERM
  trap 'cleanup; exit 129' HUP

  # Which version: the pinned one, or the latest release's (read from its SHA256SUMS).
  if [ -n "$version" ]; then
    url=$base/v$version
    download "$url/SHA256SUMS" "$tmp/SHA256SUMS" ||
      die "waitcmd $version not found: no $url/SHA256SUMS (is the version right? releases: https://github.com/waitcmd/waitcmd/releases)"
  else
    url=$latest
    download "$url/SHA256SUMS" "$tmp/SHA256SUMS" ||
      die "cannot download the latest release's checksums from $url/SHA256SUMS"
    version=$(awk '{ f = $2; sub(/^\*/, "", f) }
      f ~ /^waitcmd-.+-(x86_64|aarch64)-/ { sub(/^waitcmd-/, "", f); sub(/-(x86_64|aarch64)-.*$/, "", f); print f; exit }' "$tmp/SHA256SUMS")
    [ -n "$version" ] || die "cannot tell the latest version from $url/SHA256SUMS"
    # The archives come from the version's own directory (its SHA256SUMS is the same file).
    url=$base/v$version
  fi

  archive=waitcmd-$version-$target.tar.gz
  expected=$(awk -v f="$archive" '$2 == f || $2 == "*" f { print tolower($1); exit }' "$tmp/SHA256SUMS")
  [ -n "$expected" ] || die "waitcmd $version has no build for $target ($archive is not in $url/SHA256SUMS)"

  say "downloading $url/$archive"
  download "$url/$archive" "$tmp/$archive" || die "download failed: $url/$archive"
  actual=$(sha256_of "$tmp/$archive") || die "no SHA-256 tool found (sha256sum, shasum or openssl): cannot verify the download, refusing to install"
  if [ "$actual" != "$expected" ]; then
    die "checksum mismatch for $archive: SHA256SUMS says $expected, the download is $actual; refusing to install (nothing was changed)"
  fi
  say "verified sha256 $actual"

  if ! mkdir "$tmp/unpacked" || ! (cd "$tmp/unpacked" && gzip -dc "../$archive" | tar -xf -); then
    die "cannot unpack $archive"
  fi
  new=$tmp/unpacked/waitcmd-$version-$target/waitcmd
  [ -f "$new" ] || die "$archive does not contain waitcmd-$version-$target/waitcmd"

  # Where to.
  fallback=
  if [ -n "$bin_dir" ]; then
    dir=$bin_dir
  elif [ -n "$prefix" ]; then
    dir=${prefix%/}/bin
  elif [ -n "${WAITCMD_INSTALL_DIR:-}" ]; then
    dir=$WAITCMD_INSTALL_DIR
  else
    system_dir=${WAITCMD_SYSTEM_BIN_DIR:-/usr/local/bin}
    if [ -d "$system_dir" ] && [ -w "$system_dir" ]; then
      dir=$system_dir
    else
      [ -n "${HOME:-}" ] || die "$system_dir is not writable and HOME is not set: choose a directory with --bin-dir DIR"
      dir=$HOME/.local/bin
      fallback=$system_dir
    fi
  fi
  mkdir -p "$dir" 2>/dev/null || die "cannot create $dir: choose another directory with --prefix or --bin-dir"
  dest=$dir/waitcmd

  if [ -n "$fallback" ]; then say "$fallback is not writable: installing into $dir instead"; fi

  if [ -f "$dest" ] && same_file "$new" "$dest"; then
    say "waitcmd $version ($target) is already installed at $dest: nothing to do"
  else
    # Stage beside the destination so the final step is a single rename.
    stage=$dir/.waitcmd.install.$$
    if ! cp "$new" "$stage" 2>/dev/null || ! chmod 755 "$stage"; then
      die "cannot write to $dir: choose another directory with --prefix or --bin-dir, or run with sudo"
    fi
    got=$("$stage" --version 2>&1) ||
      die "the downloaded waitcmd does not run on this system: $got"
    case "$got" in
      "waitcmd $version "* | "waitcmd $version") ;;
      *) die "the downloaded binary reports \"$got\", expected waitcmd $version; refusing to install" ;;
    esac
    previous=
    if [ -f "$dest" ]; then previous=$("$dest" --version 2>/dev/null | head -n 1); fi
    mv -f "$stage" "$dest" || die "cannot move the new binary into $dest"
    stage=
    if [ -n "$previous" ]; then
      say "replaced $previous"
    fi
    say "installed waitcmd $version ($target) to $dest"
  fi
  say "$("$dest" --version 2>&1 | head -n 1)"
  if ! on_path "$dir"; then
    say "note: $dir is not on your PATH; add it, e.g.: export PATH=\"$dir:\$PATH\""
  fi
}

main "$@"
