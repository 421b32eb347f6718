#!/usr/bin/env bash
# What the heavy tier's end-to-end tests need from the operating system: the sandbox Claude Code
# and `vigilc run` put around commands (bubblewrap, socat, ripgrep), from Debian's packages.
# Installed when missing (as root, with apt-get); otherwise says what to install, and fails.
set -euo pipefail
missing=()
for pair in bwrap:bubblewrap socat:socat rg:ripgrep git:git; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
else
  echo "the end-to-end tests need: ${missing[*]} (Debian: apt-get install ${missing[*]})" >&2
  exit 1
fi
