#!/bin/sh
# scripts/install.sh: `make install` and `make uninstall`. install copies
# cachet and promptlint to DEST/bin, prompts/, skills/ and linter/rules/ to
# DEST/share/cachet and the given model files to DEST/share/cachet/models, and
# lists every file it wrote in DEST/share/cachet/install-manifest; uninstall
# removes exactly those files (and the folders they leave empty), nothing a
# user put there. Builds nothing and downloads nothing.
#   sh scripts/install.sh install DEST BIN [MODEL...]
#   sh scripts/install.sh uninstall DEST
set -eu
cd "$(dirname "$0")/.."
what=$1
dest=$2
share="$dest/share/cachet"
manifest="$share/install-manifest"

if [ "$what" = uninstall ]; then
    if [ ! -f "$manifest" ]; then
        echo "make uninstall: nothing to remove: '$manifest' is missing (not installed there by make install)" >&2
        exit 1
    fi
    n=0
    while IFS= read -r f; do
        [ -n "$f" ] || continue
        rm -f "$dest/$f"
        n=$((n + 1))
    done < "$manifest"
    rm -f "$manifest"
    # the folders install made, when nothing else is left in them
    [ -d "$share" ] && find "$share" -depth -type d -empty -delete
    rmdir "$dest/bin" "$dest/share" "$dest" 2>/dev/null || true
    echo "make uninstall: removed $n files under $dest"
    exit 0
fi

bin=$3
shift 3
echo "make install: cachet and promptlint into $dest/bin, their data into $share"
install -d "$dest/bin" "$share"
tmp="$manifest.tmp"
: > "$tmp"
install -m 755 "$bin/cachet" "$bin/promptlint" "$dest/bin/"
printf 'bin/cachet\nbin/promptlint\n' >> "$tmp"
find prompts skills linter/rules -type f \( -path 'linter/rules/*' -name '*.md' -o ! -path 'linter/*' \) | sort |
    while IFS= read -r f; do
        install -D -m 644 "$f" "$share/$f"
        echo "share/cachet/$f" >> "$tmp"
    done
if [ $# -gt 0 ]; then
    install -d "$share/models"
    for m in "$@"; do
        echo "make install: model $(basename "$m") into $share/models"
        install -m 644 "$m" "$share/models/"
        echo "share/cachet/models/$(basename "$m")" >> "$tmp"
    done
else
    echo "make install: no model in models/ ('make model' fetches it); the installed cachet looks for it in" \
        "--model, \$CACHET_MODEL, \$XDG_DATA_HOME/cachet/models, $share/models and ./models"
fi
mv "$tmp" "$manifest"
echo "make install: done; 'make uninstall PREFIX=...' with the same PREFIX removes it"
case ":${PATH:-}:" in
*":$dest/bin:"*) ;;
*) echo "make install: $dest/bin is not on PATH; add it: export PATH=\"$dest/bin:\$PATH\" (in ~/.profile to keep it)" ;;
esac
