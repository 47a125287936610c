"""Build a variant's initramfs: busybox, init, guest tools, cyclictest with
its shared libraries (from the host), and the variant's modules."""

import os
import subprocess

from irqrig import build_driver, paths
from irqrig.cpio import Archive
from irqrig.errors import MissingError

BUSYBOX = "/bin/busybox"
HOST_PROGRAMS = ["/usr/bin/cyclictest"]
INIT = os.path.join(paths.GUEST_DRIVER, "initramfs", "init")


def shared_libraries(program):
    """The host libraries a dynamically linked program loads (from ldd)."""
    out = subprocess.run(["ldd", program], capture_output=True, text=True,
                         check=False).stdout
    libs = []
    for line in out.splitlines():
        parts = line.split()
        if "=>" in parts and len(parts) >= 3 and parts[2].startswith("/"):
            libs.append(parts[2])
        elif parts and parts[0].startswith("/"):
            libs.append(parts[0])
    return libs


def busybox_applets():
    out = subprocess.run([BUSYBOX, "--list-full"], capture_output=True,
                         text=True, check=True).stdout
    return [a for a in out.split() if a]


def build(variant, tools):
    for path, pkg in [(BUSYBOX, "busybox-static"), ("/usr/bin/cyclictest", "rt-tests")]:
        if not os.path.exists(path):
            raise MissingError("%s is missing: install Debian's %s (./runner.py install)"
                               % (path, pkg))
    cpio = Archive()
    for d in ["dev", "proc", "sys", "tmp", "root", "etc", "lib/modules", "usr/sbin"]:
        cpio.dir(d)
    cpio.chardev("dev/console", 5, 1)
    cpio.chardev("dev/null", 1, 3, 0o666)
    cpio.file_from("bin/busybox", BUSYBOX, 0o755)
    for applet in busybox_applets():
        if applet != "bin/busybox" and applet not in cpio:
            cpio.symlink(applet, "/bin/busybox")
    cpio.file_from("init", INIT, 0o755)
    cpio.file("etc/passwd", b"root:x:0:0:root:/root:/bin/sh\n")
    cpio.file("etc/group", b"root:x:0:\n")
    for tool in tools:
        cpio.file_from("bin/" + os.path.basename(tool), tool, 0o755)
    for prog in HOST_PROGRAMS:
        cpio.file_from(prog.lstrip("/"), prog, 0o755)
        for lib in shared_libraries(prog):
            real = os.path.realpath(lib)
            cpio.file_from(lib.lstrip("/"), real, 0o755)
    for ko in build_driver.modules(variant):
        cpio.file_from("lib/modules/" + os.path.basename(ko), ko, 0o644)
    dest = paths.initramfs(variant)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    tmp = dest + ".tmp"
    cpio.write_gz(tmp)
    os.replace(tmp, dest)
    return dest


def dependencies(variant, tools):
    return ([BUSYBOX, INIT, os.path.dirname(INIT), os.path.abspath(__file__)]
            + HOST_PROGRAMS + list(tools) + build_driver.modules(variant))
