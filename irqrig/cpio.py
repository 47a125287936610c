"""A minimal newc (SVR4, no CRC) cpio writer for the guest initramfs.

Writing the archive ourselves gives device nodes without root and mknod, and
a byte-identical archive for identical inputs (all mtimes are 0).
"""

import gzip
import os
import stat

_TRAILER = "TRAILER!!!"


class Archive:
    def __init__(self):
        self._entries = {}      # path -> (mode, data, rdev)

    def dir(self, path, mode=0o755):
        self._entries[path] = (stat.S_IFDIR | mode, b"", (0, 0))

    def file(self, path, data, mode=0o644):
        self._parents(path)
        self._entries[path] = (stat.S_IFREG | mode, data, (0, 0))

    def file_from(self, path, src, mode=None):
        with open(src, "rb") as f:
            data = f.read()
        if mode is None:
            mode = stat.S_IMODE(os.stat(src).st_mode)
        self.file(path, data, mode)

    def symlink(self, path, target):
        self._parents(path)
        self._entries[path] = (stat.S_IFLNK | 0o777, target.encode(), (0, 0))

    def chardev(self, path, major, minor, mode=0o600):
        self._parents(path)
        self._entries[path] = (stat.S_IFCHR | mode, b"", (major, minor))

    def _parents(self, path):
        parts = path.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            p = "/".join(parts[:i])
            if p and p not in self._entries:
                self.dir(p)

    def __contains__(self, path):
        return path in self._entries

    def to_bytes(self):
        out = bytearray()
        ino = 1
        for path in sorted(self._entries):
            mode, data, (major, minor) = self._entries[path]
            out += _header(path, mode, len(data), ino, major, minor,
                           2 if stat.S_ISDIR(mode) else 1)
            out += data + b"\0" * (-len(data) % 4)
            ino += 1
        out += _header(_TRAILER, 0, 0, 0, 0, 0, 1)
        return bytes(out)

    def write_gz(self, dest):
        data = gzip.compress(self.to_bytes(), compresslevel=6, mtime=0)
        with open(dest, "wb") as f:
            f.write(data)


def _header(name, mode, size, ino, rmajor, rminor, nlink):
    name_b = name.encode() + b"\0"
    fields = [ino, mode, 0, 0, nlink, 0, size, 0, 0, rmajor, rminor,
              len(name_b), 0]
    head = b"070701" + b"".join(b"%08X" % v for v in fields)
    head += name_b
    head += b"\0" * (-len(head) % 4)
    return head
