#!/bin/sh
# tests/realprompts/split.sh: assigns every corpus file to the development part
# ("dev") or the held-out part ("held"), one third held out per kind. The order
# is a seeded shuffle: files of a kind sorted by sha256("SEED:path"); the first
# round(n/3) are held. Prints "path<TAB>dev|held" sorted by path. It reads file
# names only (never contents) and does not run promptlint.
# Files are split in batches, each batch once when it is added: batch v1 (the
# first 214 files, no batch column in LABELS.tsv) by kind folder, seed
# cachet-realprompts-v1; a later batch (-b v2: the LABELS.tsv lines whose 7th
# column is v2) among its own files per kind, with seed cachet-realprompts-v2,
# so adding files never moves an earlier file between dev and held.
# usage: tests/realprompts/split.sh [-b BATCH] [KIND...]   (default: batch v1, every kind folder)
set -eu
batch=v1
if [ "${1:-}" = "-b" ]; then
    batch=$2
    shift 2
fi
seed=cachet-realprompts-$batch
cd "$(dirname "$0")"
kinds=${*:-"chat-template rendered-system framework-template agents-md skill-md other"}
# The files of one kind in this batch, one per line.
files_of() {
    if [ "$batch" = v1 ]; then
        find "$1" -type f | LC_ALL=C sort | while IFS= read -r f; do
            # v1 is the batch without a batch column
            if ! awk -F '\t' -v f="$f" '$1 == f && NF >= 7 && $7 != "v1" { found = 1 } END { exit !found }' LABELS.tsv; then
                printf '%s\n' "$f"
            fi
        done
    else
        awk -F '\t' -v b="$batch" -v k="$1" '$7 == b && index($1, k "/") == 1 { print $1 }' LABELS.tsv | LC_ALL=C sort
    fi
}
for kind in $kinds; do
    [ -d "$kind" ] || continue
    n=$(files_of "$kind" | wc -l)
    held=$(( (n + 1) / 3 ))
    files_of "$kind" | while IFS= read -r f; do
        h=$(printf '%s:%s' "$seed" "$f" | sha256sum | cut -c1-16)
        printf '%s\t%s\n' "$h" "$f"
    done | LC_ALL=C sort | awk -F '\t' -v k="$held" \
        '{ printf "%s\t%s\n", $2, (NR <= k ? "held" : "dev") }'
done | LC_ALL=C sort
