#!/usr/bin/env bash
# Checks the links of README.md and docs/*.md: every markdown link must point inside the
# repository (a relative path, no URL, no absolute path, nothing above the repository root),
# the file or folder it names must exist, and a `#anchor` into a markdown file must name one
# of its headings (GitHub's heading ids). Links inside code (fenced blocks, `inline code`)
# are not links and are skipped. No network.
#
#   bash scripts/check-links.sh [FILE.md ...]     (default: README.md docs/*.md)
#
# Prints one line per bad link (FILE:LINE: target: reason) and exits 1 if there is any.
set -euo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C
root="$(pwd -P)"

if [ "$#" -gt 0 ]; then files=("$@"); else files=(README.md docs/*.md); fi

# FILE -> "LINE<TAB>TARGET" for each inline link [text](target) and reference definition
# [label]: target, outside fenced code blocks and inline code.
links() {
  awk '
    /^[ \t]*(```|~~~)/ { fenced = !fenced; next }
    fenced { next }
    {
      line = $0
      gsub(/`[^`]*`/, "", line)
      if (match(line, /^[ \t]*\[[^]]+\]:[ \t]+[^ \t]+/)) {
        def = substr(line, RSTART, RLENGTH); sub(/^[ \t]*\[[^]]+\]:[ \t]+/, "", def)
        print NR "\t" def
      }
      while (match(line, /\]\([^)]*\)/)) {
        t = substr(line, RSTART + 2, RLENGTH - 3)
        sub(/[ \t]+"[^"]*"$/, "", t)
        print NR "\t" t
        line = substr(line, RSTART + RLENGTH)
      }
    }' "$1"
}

# FILE.md -> its heading ids, one per line, as GitHub makes them: lower case, punctuation
# other than "-" and "_" dropped, spaces to "-", "-1", "-2", … on repeats.
anchors() {
  awk '
    /^[ \t]*(```|~~~)/ { fenced = !fenced; next }
    fenced { next }
    /^#+[ \t]/ && match($0, /^#+/) && RLENGTH <= 6 {
      h = $0
      sub(/^#+[ \t]+/, "", h); sub(/[ \t]+#+[ \t]*$/, "", h)
      h = tolower(h)
      gsub(/[!-,.\/:-@[-^`{-~]/, "", h)
      gsub(/[ \t]/, "-", h)
      if (h in seen) { n = ++seen[h]; print h "-" n } else { seen[h] = 0; print h }
    }' "$1"
}

bad=0
report() {
  echo "$1:$2: $3: $4"
  bad=1
}

for f in "${files[@]}"; do
  [ -f "$f" ] || { echo "$f: no such file"; bad=1; continue; }
  dir="$(dirname "$f")"
  while IFS="$(printf '\t')" read -r n target; do
    target="${target#<}"
    target="${target%>}"
    case "$target" in
      "") report "$f" "$n" "(empty)" "empty link"; continue ;;
      *://* | mailto:*) report "$f" "$n" "$target" "points outside the repository"; continue ;;
      /*) report "$f" "$n" "$target" "absolute path"; continue ;;
    esac
    path="${target%%#*}"
    anchor=""
    case "$target" in *"#"*) anchor="${target#*#}" ;; esac
    if [ -z "$path" ]; then
      resolved="$f"
    else
      resolved="$dir/$path"
      if [ ! -e "$resolved" ]; then
        report "$f" "$n" "$target" "no such file"
        continue
      fi
      real="$(cd "$(dirname "$resolved")" && pwd -P)/$(basename "$resolved")"
      case "$real" in
        "$root" | "$root"/*) ;;
        *) report "$f" "$n" "$target" "outside the repository"; continue ;;
      esac
    fi
    if [ -n "$anchor" ]; then
      case "$resolved" in
        *.md)
          if ! anchors "$resolved" | grep -qxF -- "$anchor"; then
            report "$f" "$n" "$target" "no heading with id '$anchor'"
          fi
          ;;
      esac
    fi
  done < <(links "$f")
done
[ "$bad" -eq 0 ] && echo "links ok: ${files[*]}"
exit "$bad"
