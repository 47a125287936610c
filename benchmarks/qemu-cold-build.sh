#!/bin/sh
# Cold build times of QEMU 7.2 (bookworm) and 10.0.2 (bookworm-backports):
# Debian's source packages from the rig's download cache, the rig's configure
# options (irqrig/build_qemu.py, and its 7.2 version), ccache off, qemu-system-x86_64 only.
# The rig's own splices (device, plugin) are left out: they are two files.
# Usage: benchmarks/qemu-cold-build.sh [WORKDIR]   (default: a new /tmp dir)
set -eu
dl=${IRQRIG_CACHE:-$HOME/.cache/irqrig}/downloads
work=${1:-$(mktemp -d /tmp/qemu-cold.XXXXXX)}
mkdir -p "$work"
jobs=$(($(nproc) + 1))
export CCACHE_DISABLE=1

elapsed() { echo $(($(date +%s) - $1)); }

build() {       # name dsc-or-tarball [extra configure options]
	name=$1
	src=$work/$name
	t0=$(date +%s)
	case $2 in
	*.dsc) dpkg-source --no-check -x "$2" "$src" >/dev/null ;;
	*) mkdir -p "$src" && tar -xf "$2" -C "$src" --strip-components=1
		# as build_qemu.py: the +ds tarball has no EDK2 blobs to unpack
		sed -i 's/^if unpack_edk2_blobs$/if unpack_edk2_blobs and false/' \
			"$src/pc-bios/meson.build" ;;
	esac
	t_unpack=$(elapsed "$t0")
	mkdir -p "$src/b"
	cd "$src/b"
	t0=$(date +%s)
	../configure --target-list=x86_64-softmmu --without-default-features \
		--enable-tcg --enable-kvm --disable-docs \
		--disable-install-blobs --disable-werror $3 >configure.log 2>&1
	t_conf=$(elapsed "$t0")
	t0=$(date +%s)
	ninja -j"$jobs" qemu-system-x86_64 >ninja.log 2>&1
	t_comp=$(elapsed "$t0")
	echo "$name: unpack ${t_unpack}s configure ${t_conf}s compile ${t_comp}s (-j$jobs, ccache off)"
}

# 7.2 is no longer a rig download: fetch it once (deb-src is in the rig's
# apt sources file after ./runner.py install).
if [ ! -e "$dl/qemu/qemu_7.2+dfsg-7+deb12u18.dsc" ]; then
	echo "no QEMU 7.2 source in $dl/qemu; fetch it with:" >&2
	echo "  mkdir -p $dl/qemu && cd $dl/qemu && apt-get source --download-only qemu=1:7.2+dfsg-7+deb12u18" >&2
	exit 1
fi
echo "cold QEMU builds in $work, $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
build qemu-7.2 "$dl/qemu/qemu_7.2+dfsg-7+deb12u18.dsc" ""
# 7.2 as the rig built it (no plugins; system meson), 10.0 as it does now
build qemu-10.0.2 "$dl/qemu-10.0.2/qemu_10.0.2+ds.orig.tar.xz" \
	"--enable-plugins --disable-download --python=/usr/bin/python3"
