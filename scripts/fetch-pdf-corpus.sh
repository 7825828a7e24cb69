#!/bin/sh
# Fetches real PDFs from Debian documentation packages into .cache/pdf-corpus (never committed).
# Used by the PDF corpus test and by `pnpm bench:pdf`. Needs apt (Debian/Ubuntu); `apt-get
# download` needs no root, but a host without package lists gets an `apt-get update` first when
# it may run one. Idempotent: an existing, complete corpus is left alone.
set -eu

ROOT=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
TARGET="${PDF_CORPUS_DIR:-$ROOT/.cache/pdf-corpus}"
PACKAGES="${PDF_CORPUS_PACKAGES:-r-doc-pdf gnuplot-doc asymptote-doc}"

if [ -f "$TARGET/.complete" ]; then
  echo "pdf corpus: $(ls "$TARGET"/*.pdf | wc -l) files in $TARGET"
  exit 0
fi
command -v apt-get >/dev/null 2>&1 || { echo "pdf corpus: apt-get is needed (Debian or Ubuntu)" >&2; exit 1; }

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
if ! apt-get download $PACKAGES >download.log 2>&1; then
  if [ "$(id -u)" = 0 ]; then apt-get update -qq >/dev/null 2>&1 || true;
  elif command -v sudo >/dev/null 2>&1; then sudo -n apt-get update -qq >/dev/null 2>&1 || true; fi
  apt-get download $PACKAGES >download.log 2>&1 || { cat download.log >&2; exit 1; }
fi

mkdir -p "$TARGET"
for deb in ./*.deb; do
  package=$(dpkg-deb -f "$deb" Package)
  mkdir -p "extract/$package"
  dpkg-deb -x "$deb" "extract/$package"
  # Each document once: the packages install some PDFs twice (symlinks and texmf copies).
  find -L "extract/$package" -type f -name '*.pdf' | sort | while read -r file; do
    sum=$(sha256sum "$file" | cut -d' ' -f1)
    grep -qx "$sum" seen.txt 2>/dev/null && continue
    echo "$sum" >>seen.txt
    cp "$file" "$TARGET/$package--$(basename "$file")"
  done
done
touch "$TARGET/.complete"
echo "pdf corpus: $(ls "$TARGET"/*.pdf | wc -l) files in $TARGET"
