"""The newest glibc symbol version each ELF file needs, checked against a ceiling.

    python scripts/lib/glibc-check.py MAX FILE...     (MAX like 2.17)

Prints `FILE: ARCH, needs GLIBC_x.y (newest of N versioned symbols)` for each
file and exits 1 if any needs a version above MAX: a library or program that
needs GLIBC_2.34 fails to load on every distribution older than that
(Debian 11, Ubuntu 20.04, RHEL 8, Amazon Linux 2). Reads the version needs
(.gnu.version_r) with pyelftools (auditwheel's dependency), so it reads
aarch64 files on an x86-64 machine too. A static program needs nothing.
"""

import sys

from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerNeedSection


def version(text):
    return tuple(int(part) for part in text.split("."))


def needs(path):
    """(machine, newest GLIBC version needed or None, number of GLIBC needs)."""
    with open(path, "rb") as stream:
        elf = ELFFile(stream)
        found = []
        for section in elf.iter_sections():
            if not isinstance(section, GNUVerNeedSection):
                continue
            for _, auxiliaries in section.iter_versions():
                for aux in auxiliaries:
                    name = aux.name
                    if name.startswith("GLIBC_") and name[6:7].isdigit():
                        found.append(version(name[6:]))
        return elf["e_machine"], (max(found) if found else None), len(found)


def main(argv):
    if len(argv) < 3:
        sys.exit("usage: glibc-check.py MAX FILE...")
    ceiling = version(argv[1])
    failed = 0
    for path in argv[2:]:
        machine, newest, count = needs(path)
        if newest is None:
            print(f"{path}: {machine}, needs no versioned glibc symbol")
            continue
        shown = ".".join(map(str, newest))
        verdict = ""
        if newest > ceiling:
            failed += 1
            verdict = f": above GLIBC_{argv[1]}"
        print(f"{path}: {machine}, needs GLIBC_{shown} (newest of {count} glibc version needs){verdict}")
    if failed:
        print(f"glibc-check: {failed} file(s) need a glibc newer than {argv[1]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
