#!/bin/sh
# scripts/deps.sh: install the Debian packages cachet needs to build and test,
# only those missing. Idempotent. As a non-root user it prints the command to
# run with sudo instead of failing halfway.
set -eu
pkgs="build-essential pkg-config git ca-certificates python3 python3-pip unzip tmux
libcurl4-openssl-dev libcjson-dev libpcre2-dev libgit2-dev libmicrohttpd-dev
libyaml-dev libedit-dev"
missing=""
for p in $pkgs; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
# pip may come from elsewhere (pyenv); python3-pip is only needed when absent.
if command -v pip3 >/dev/null 2>&1 || command -v pip >/dev/null 2>&1; then
    missing=$(echo "$missing" | tr ' ' '\n' | grep -v '^python3-pip$' | grep -v '^python3$' | tr '\n' ' ')
fi
missing=$(echo $missing)
if [ -z "$missing" ]; then
    echo "deps: all packages present"
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "deps: missing packages: $missing" >&2
    echo "deps: run: sudo apt-get update && sudo apt-get install -y $missing" >&2
    exit 1
fi
echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing
