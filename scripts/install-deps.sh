#!/usr/bin/env bash
# Installs what ndx needs to build and test, from Debian's packages. Safe to re-run: it only
# calls apt-get when something is missing.
set -euo pipefail

packages=(cmake ninja-build g++ libopenblas-dev libhwy-dev libkissfft-dev libdnnl-dev libgtest-dev ccache pkg-config nlohmann-json3-dev graphviz libopenmpi-dev openmpi-bin)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
