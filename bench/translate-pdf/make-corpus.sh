#!/bin/sh
# Rebuilds the page excerpts of corpus/ from their public sources (see corpus/manifest.json):
# the mirrors /work/.mirror/<owner>+<repo>/repo brought by `fetch`, and Debian documentation packages
# (apt-get download; dpkg -x). Needs poppler-utils (pdfseparate, pdfunite) and ghostscript (for entries with "excerpt": "gs").
set -eu
out=$(cd "$(dirname "$0")" && pwd)/corpus
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
node -e '
const m = require(process.argv[1]);
for (const e of m.documents) console.log([e.file, e.origin.kind, e.origin.repo ?? e.origin.package, e.origin.path, e.origin.commit ?? "-", e.pages.join(","), e.excerpt ?? "poppler"].join("\t"));
' "$out/manifest.json" | while IFS="$(printf '\t')" read -r file kind where path commit pages how; do
  src="$tmp/src.pdf"
  if [ "$kind" = git ]; then git -C "/work/.mirror/$(echo "$where" | tr / +)/repo" show "$commit:$path" > "$src"
  else (cd "$tmp" && apt-get download "$where" >/dev/null 2>&1 && dpkg -x ./"$where"_*.deb x && rm -f ./*.deb); case "$path" in *.gz) gunzip -c "$tmp/x/$path" > "$src";; *) cp "$tmp/x/$path" "$src";; esac; fi
  if [ "$how" = whole ]; then
    # A tagged file measured whole (the slide deck): copied as it is, structure tree and all.
    cp "$src" "$out/$file"
  elif [ "$how" = gs ]; then
    # Ghostscript writes the chosen pages with only the fonts and images they use (pdfseparate +
    # pdfunite copy every page's shared resources again, 16 MB for the Redbook's 14 pages, and refuse
    # encrypted files). It loses the ToUnicode maps of some CJK fonts, so those stay with poppler.
    gs -q -dSAFER -dBATCH -dNOPAUSE -sDEVICE=pdfwrite -dAutoRotatePages=/None -dPreserveAnnots=false -dPreserveDests=false -sPageList="$pages" -sOutputFile="$out/$file" "$src" 2>/dev/null || [ -s "$out/$file" ]
  else
    parts=""
    for p in $(echo "$pages" | tr , ' '); do pdfseparate -f "$p" -l "$p" "$src" "$tmp/p-$p.pdf" 2>/dev/null; parts="$parts $tmp/p-$p.pdf"; done
    # shellcheck disable=SC2086
    if [ "$(echo $parts | wc -w)" -eq 1 ]; then cp $parts "$out/$file"; else pdfunite $parts "$out/$file" 2>/dev/null; fi
    rm -f "$tmp"/p-*.pdf
  fi
  echo "$file"
done
