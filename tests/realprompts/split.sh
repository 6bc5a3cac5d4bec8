#!/bin/sh
# tests/realprompts/split.sh: assigns every corpus file to the development part
# ("dev") or the held-out part ("held"), one third held out per kind. The order
# is a seeded shuffle: files of a kind sorted by sha256("SEED:path"); the first
# round(n/3) are held. Prints "path<TAB>dev|held" sorted by path. It reads file
# names only (never contents) and does not run promptlint.
# usage: tests/realprompts/split.sh [KIND...]   (default: every kind folder)
set -eu
seed=cachet-realprompts-v1
cd "$(dirname "$0")"
kinds=${*:-"chat-template rendered-system framework-template agents-md skill-md other"}
for kind in $kinds; do
    [ -d "$kind" ] || continue
    n=$(find "$kind" -type f | wc -l)
    held=$(( (n + 1) / 3 ))
    find "$kind" -type f | LC_ALL=C sort | while IFS= read -r f; do
        h=$(printf '%s:%s' "$seed" "$f" | sha256sum | cut -c1-16)
        printf '%s\t%s\n' "$h" "$f"
    done | LC_ALL=C sort | awk -F '\t' -v k="$held" \
        '{ printf "%s\t%s\n", $2, (NR <= k ? "held" : "dev") }'
done | LC_ALL=C sort
