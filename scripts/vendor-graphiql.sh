#!/usr/bin/env bash
# vendor-graphiql.sh fetches GraphiQL's browser (UMD) build and what it needs
# from the npm registry into graphiql/assets/, which is committed: hbgraph
# embeds those files and serves them itself, so GraphiQL works where no CDN
# can be reached. The versions are in graphiql/versions.env.
#
#   scripts/vendor-graphiql.sh                fetch, check every file against
#                                             graphiql/assets/SHA256SUMS, then
#                                             install (fails on any mismatch,
#                                             changing nothing)
#   scripts/vendor-graphiql.sh --update-sums  fetch, install and (re)write
#                                             SHA256SUMS (after a version bump)
#   scripts/vendor-graphiql.sh --check        offline: check the committed
#                                             files against SHA256SUMS
#
# Each package is fetched with `npm pack NAME@VERSION` (npm checks the
# tarball against the registry's integrity hash) and unpacked with tar. The
# result depends only on versions.env, so running it again changes nothing.
set -euo pipefail

usage() { sed -n '2,18s/^# \{0,1\}//p' "$0"; }

mode=verify
case "${1:-}" in
"") ;;
--update-sums) mode=update ;;
--check) mode=check ;;
-h | --help) usage; exit 0 ;;
*) usage >&2; exit 2 ;;
esac
[ $# -le 1 ] || { usage >&2; exit 2; }

root=$(cd "$(dirname "$0")/.." && pwd)
assets=$root/graphiql/assets
sums=$assets/SHA256SUMS
export LC_ALL=C

# shellcheck source=../graphiql/versions.env
. "$root/graphiql/versions.env"
: "${GRAPHIQL:?}" "${REACT:?}" "${REACT_DOM:?}" "${PLUGIN_EXPLORER:?}"

# package  version  path in its tarball  path under graphiql/assets
files="
graphiql                  $GRAPHIQL         package/graphiql.min.js                 graphiql-$GRAPHIQL/graphiql.min.js
graphiql                  $GRAPHIQL         package/graphiql.min.css                graphiql-$GRAPHIQL/graphiql.min.css
graphiql                  $GRAPHIQL         package/LICENSE                         graphiql-$GRAPHIQL/LICENSE
react                     $REACT            package/umd/react.production.min.js     react-$REACT/react.production.min.js
react                     $REACT            package/LICENSE                         react-$REACT/LICENSE
react-dom                 $REACT_DOM        package/umd/react-dom.production.min.js react-dom-$REACT_DOM/react-dom.production.min.js
react-dom                 $REACT_DOM        package/LICENSE                         react-dom-$REACT_DOM/LICENSE
@graphiql/plugin-explorer $PLUGIN_EXPLORER  package/dist/index.umd.js               plugin-explorer-$PLUGIN_EXPLORER/index.umd.js
@graphiql/plugin-explorer $PLUGIN_EXPLORER  package/dist/style.css                  plugin-explorer-$PLUGIN_EXPLORER/style.css
"

# listed prints the files under dir (but SHA256SUMS), one a line, sorted.
listed() { (cd "$1" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | sort); }

if [ "$mode" = check ]; then
	[ -f "$sums" ] || { echo "vendor-graphiql: $sums is missing" >&2; exit 1; }
	(cd "$assets" && sha256sum --quiet --strict -c SHA256SUMS) || {
		echo "vendor-graphiql: graphiql/assets does not match SHA256SUMS" >&2
		exit 1
	}
	if ! diff -u <(awk '{print $2}' "$sums" | sort) <(listed "$assets") >&2; then
		echo "vendor-graphiql: graphiql/assets holds files SHA256SUMS does not list (or the reverse)" >&2
		exit 1
	fi
	echo "vendor-graphiql: graphiql/assets matches SHA256SUMS"
	exit 0
fi

command -v npm >/dev/null || { echo "vendor-graphiql: npm is needed" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
stage=$tmp/assets
mkdir -p "$stage"

# Fetch each package once, then take the listed files out of its tarball.
while read -r pkg version src dst; do
	[ -n "$pkg" ] || continue
	packdir=$tmp/packs/$pkg@$version
	if [ ! -d "$packdir" ]; then
		mkdir -p "$packdir/x"
		echo "vendor-graphiql: npm pack $pkg@$version" >&2
		(cd "$packdir" && npm pack --silent "$pkg@$version" >/dev/null)
		set -- "$packdir"/*.tgz
		[ $# -eq 1 ] && [ -f "$1" ] || { echo "vendor-graphiql: npm pack $pkg@$version gave no tarball" >&2; exit 1; }
		tar -xzf "$1" -C "$packdir/x"
	fi
	[ -f "$packdir/x/$src" ] || { echo "vendor-graphiql: $pkg@$version has no $src" >&2; exit 1; }
	mkdir -p "$(dirname "$stage/$dst")"
	cp "$packdir/x/$src" "$stage/$dst"
	chmod 0644 "$stage/$dst"
done <<<"$files"

(cd "$stage" && listed . | xargs sha256sum) >"$tmp/SHA256SUMS"

if [ "$mode" = verify ]; then
	[ -f "$sums" ] || { echo "vendor-graphiql: $sums is missing; run with --update-sums" >&2; exit 1; }
	if ! diff -u "$sums" "$tmp/SHA256SUMS" >&2; then
		echo "vendor-graphiql: fetched files differ from graphiql/assets/SHA256SUMS (above); nothing changed" >&2
		exit 1
	fi
fi

# Install: graphiql/assets becomes exactly the staged files and their sums.
cp "$tmp/SHA256SUMS" "$stage/SHA256SUMS"
mkdir -p "$assets"
find "$assets" -mindepth 1 -delete
cp -R "$stage/." "$assets/"
echo "vendor-graphiql: graphiql/assets holds:" >&2
(cd "$assets" && sed 's/^/  /' SHA256SUMS) >&2
