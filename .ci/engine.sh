# Sourced by .ci/container-check and .ci/apps-container-check: find a container engine that can build and run an
# image here. `find_engine NAME DOCKERFILE` sets `engine` (docker or podman; empty when none can), `base` (the
# image to build FROM), `opts` (what every build and run needs on this machine) and `format` (build only).
# No registry is reachable from CI, so with podman and no base image the base is made here from Debian packages
# (debootstrap from the machine's Debian mirror). SALESGYM_IMAGE_BASE names another base image.

apt_install() {  # Debian packages, the package lists refreshed first if they are not there
  export DEBIAN_FRONTEND=noninteractive
  { apt-get install -y -qq "$@" || { apt-get update -qq && apt-get install -y -qq "$@"; }; } >/dev/null 2>&1
}

local_base() {  # $1 image: Debian's python3 and venv from the machine's mirror, imported as a base image
  command -v debootstrap >/dev/null 2>&1 || apt_install debootstrap || return 1
  local root mirror suite
  root=$(mktemp -d)
  mirror=$(awk '$1 == "URIs:" { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
  debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates "$suite" "$root" \
    "${mirror:-http://deb.debian.org/debian}" >/dev/null || { rm -rf "$root"; return 1; }
  # the machine's CA bundle (a proxy between it and the package index may sign with its own CA), and pip told to
  # read it rather than the bundle it carries
  cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
  printf '[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n' >"$root/etc/pip.conf"
  tar -C "$root" -c . | "$engine" import -q - "$1" >/dev/null
  rm -rf "$root"
}

runnable() {  # $1 name: sets opts to what a container needs to start here; else says why and fails
  local err
  err=$("$engine" run --rm "$base" true 2>&1) && return 0
  if [ "$engine" = podman ]; then
    # In a VM like CI's, crun refuses the hybrid cgroup layout (a cgroup v2 controller beside v1) and no runtime
    # may raise a resource limit: runc, with limits at or below this shell's, starts containers
    command -v runc >/dev/null 2>&1 || apt_install runc || true
    opts=(--runtime runc --ulimit "nofile=$(ulimit -n):$(ulimit -n)" --ulimit nproc=4096:4096)
    err=$("$engine" run --rm "${opts[@]}" "$base" true 2>&1) && return 0
  fi
  echo "$1: $engine cannot start a container here: ${err##*$'\n'}"
  return 1
}

find_engine() {  # $1 name (for messages), $2 the Dockerfile (its ARG BASE is the default base)
  engine="" opts=() format=()
  local candidate
  for candidate in docker podman; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" info >/dev/null 2>&1; then engine=$candidate; break; fi
  done
  base=${SALESGYM_IMAGE_BASE:-$(awk -F= '$1 == "ARG BASE" { print $2; exit }' "$2")}
  [ -n "$engine" ] || return 0
  if ! "$engine" image inspect "$base" >/dev/null 2>&1 && ! timeout 120 "$engine" pull -q "$base" >/dev/null 2>&1; then
    echo "$1: $engine answers but cannot get the base image $base (no registry reachable)"
    if [ "$engine" != podman ] || [ -n "${SALESGYM_IMAGE_BASE:-}" ]; then engine=""; return 0; fi
    base=localhost/salesgym-debian-base
    if ! "$engine" image inspect "$base" >/dev/null 2>&1; then
      echo "$1: making $base from Debian packages"
      local_base "$base" || { echo "$1: could not make $base"; engine=""; return 0; }
    fi
  fi
  runnable "$1" || { engine=""; return 0; }
  if [ "$engine" = podman ]; then format=(--format docker); fi  # podman's default format (OCI) drops HEALTHCHECK
}

refuses_without_tokens() {  # $1 name, $2 image: its container, started without tokens, must exit and say why
  local out
  if out=$("$engine" run --rm "${opts[@]}" --no-healthcheck "$2" 2>&1); then
    echo "$1: a container of $2 started beyond loopback without its tokens"; return 1
  fi
  grep -qi "token" <<<"$out" || { echo "$1: $2 refused to start without saying why: $out"; return 1; }
  echo "$1: without its tokens a container of $2 refuses to start, and says why"
}
