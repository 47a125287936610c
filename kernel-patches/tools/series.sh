#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The RT_IRQ_DISABLE series as git commits, and back.
#
#   series.sh git    DIR   unpack the base into DIR, commit it (the series'
#                          base-commit: the same hash on every machine, for
#                          the same Debian packages), then apply
#                          kernel-patches/$KVER/series with git am (branch rt-irq)
#   series.sh export DIR   git format-patch DIR's rt-irq branch into
#                          kernel-patches/$KVER/: [RFC PATCH vN NN/MM] with a
#                          base-commit line and each patch's Cc list from
#                          get_maintainer.pl; the cover letter keeps its text
#                          and gets a new shortlog and diffstat
#
# KVER (default 6.12) picks the series.  The 6.12 base is Debian's
# linux-source-6.12 tarball.  The 6.1 base is linux-source-6.1 with Debian's
# patches-rt applied as the rig applies them (kernel-patches/6.1/debian-rt.toml
# and debian-rt-fixes/): the tree `./runner.py build 6.1-rt` prepares in
# build/src/linux-6.1+debian-rt, copied from there (the same hash where
# patch(1) created its new files with the same umask, 022 here).
# VERSION (default 9) sets vN.
set -eu

KP=$(cd "$(dirname "$0")/.." && pwd)
KVER=${KVER:-6.12}
SERIES=$KP/$KVER
TARBALL=/usr/src/linux-source-$KVER.tar.xz
RT_TREE=$KP/../build/src/linux-$KVER+debian-rt
NAME="irqrig developers"
EMAIL="irqrig@users.noreply.github.com"
VERSION=${VERSION:-9}
BASE_DATE="2000-01-01T00:00:00Z"

die() { echo "series.sh: $*" >&2; exit 1; }

ident() {
	GIT_AUTHOR_NAME=$NAME GIT_AUTHOR_EMAIL=$EMAIL \
	GIT_COMMITTER_NAME=$NAME GIT_COMMITTER_EMAIL=$EMAIL "$@"
}

cmd_git() {
	dir=$1
	[ -e "$dir" ] && die "$dir exists"
	[ -r "$TARBALL" ] || die "no $TARBALL (apt-get install linux-source-$KVER)"
	pkg=$(dpkg-query -W -f '${Version}' "linux-source-$KVER")
	title="Debian linux-source-$KVER $pkg"
	if [ -f "$SERIES/debian-rt.toml" ]; then
		[ -d "$RT_TREE" ] ||
			die "no $RT_TREE: run ./runner.py build --no-qemu $KVER-rt first"
		rt=$(sed -n 's/^version = "\(.*\)"/\1/p' "$SERIES/debian-rt.toml")
		title="$title + patches-rt of Debian linux $rt (kernel-patches/$KVER/debian-rt.toml)"
		mkdir -p "$dir"
		cp -a "$RT_TREE"/. "$dir"/
	else
		mkdir -p "$dir"
		tar -xf "$TARBALL" -C "$dir" --strip-components=1
	fi
	cd "$dir"
	git init -q -b debian
	# Debian's .gitignore ignores the top level; the tarball has no build output.
	git add -A -f
	GIT_AUTHOR_DATE=$BASE_DATE GIT_COMMITTER_DATE=$BASE_DATE \
		ident git commit -q -m "$title"
	git checkout -q -b rt-irq
	grep -v '^#' "$SERIES/series" | grep . | while read -r p; do
		ident git am -q --committer-date-is-author-date "$SERIES/$p" ||
			die "git am $p failed"
	done
	echo "base $(git rev-parse debian), $(git rev-list --count debian..rt-irq) patches on rt-irq"
}

# Cc: lines for one patch (email headers), from MAINTAINERS.
cc_lines() {
	perl scripts/get_maintainer.pl --nogit --nogit-fallback --norolestats "$1" |
		sed 's/^/Cc: /'
}

cmd_export() {
	dir=$1
	cd "$dir"
	base=$(git rev-parse debian)
	out=$(mktemp -d)
	ident git format-patch -q -o "$out" --cover-letter --base="$base" \
		--subject-prefix="RFC PATCH v$VERSION" debian..rt-irq
	for p in "$out"/*.patch; do
		case $p in */0000-cover-letter.patch) continue ;; esac
		cc_lines "$p" > "$out/cc"
		cat "$out/cc" >> "$out/all-cc"
		# The Cc headers go right after Subject: (and its folded lines).
		awk -v ccf="$out/cc" '
			!done && /^$/ { while ((getline l < ccf) > 0) print l; done = 1 }
			{ print }' "$p" > "$p.new"
		mv "$p.new" "$p"
	done
	cover "$out"
	rm -f "$SERIES"/0*.patch
	cp "$out"/0*.patch "$SERIES"/
	{
		if [ -f "$SERIES/debian-rt.toml" ]; then
			echo "# RT_IRQ_DISABLE series for Debian linux-source-$KVER + Debian's patches-rt (quilt"
			echo "# order; applied after debian-rt.toml's series)."
		else
			echo "# RT_IRQ_DISABLE series for Debian linux-source-$KVER (quilt order)"
		fi
		echo "# Made by kernel-patches/tools/series.sh export; base-commit in the cover letter."
		for p in "$out"/0*.patch; do
			case $p in */0000-cover-letter.patch) continue ;; esac
			basename "$p"
		done
	} > "$SERIES/series"
	rm -rf "$out"
	echo "wrote $(grep -vc '^#' "$SERIES/series") patches and the cover letter to $SERIES"
}

# The cover letter: the generated headers, shortlog, diffstat and
# base-commit around the text of the current one (from its first body line
# to the line before the old shortlog).
cover() {
	out=$1
	new=$out/0000-cover-letter.patch
	old=$SERIES/0000-cover-letter.patch
	title=$(sed -n 's/^Subject: \[[^]]*\] //p' "$old")
	[ -n "$title" ] || die "no Subject in $old"
	awk -v title="$title" -v ccf="$out/all-cc" -v oldf="$old" '
		BEGIN {
			while ((getline l < ccf) > 0)
				if (!(l in seen)) { seen[l] = 1; cc[++n] = l }
			# old body: after the headers, up to the shortlog
			inbody = 0
			while ((getline l < oldf) > 0) {
				if (!inbody) { if (l == "") inbody = 1; continue }
				if (l ~ /^[^ ].* \([0-9]+\):$/) break
				body[++m] = l
			}
		}
		/^Subject:/ { sub(/\*\*\* SUBJECT HERE \*\*\*/, title); print; next }
		!hdr && /^$/ {
			print "To: linux-rt-devel@lists.linux.dev"
			for (i = 1; i <= n; i++)
				if (cc[i] != "Cc: linux-rt-devel@lists.linux.dev")
					print cc[i]
			print ""
			for (i = 1; i <= m; i++) print body[i]
			hdr = 1; skip = 1; next
		}
		skip && /^\*\*\* BLURB HERE \*\*\*$/ { skip = 0; getline; next }
		skip { next }
		{ print }' "$new" > "$new.new"
	mv "$new.new" "$new"
}

case ${1:-} in
git) [ $# -eq 2 ] || die "usage: series.sh git DIR"; cmd_git "$2" ;;
export) [ $# -eq 2 ] || die "usage: series.sh export DIR"; cmd_export "$2" ;;
*) die "usage: series.sh git DIR | export DIR" ;;
esac
