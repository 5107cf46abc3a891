#!/usr/bin/env python3
"""Registers, spill stack and static shared memory of every kernel in the given cubins (no GPU).

Usage:
  TWOPHASE_CUBIN_DUMP=/tmp/cubins cargo test --release -p twophase-gpu --test kernels_compile
  python3 scripts/kernel_resources.py /tmp/cubins/*mergesort*sm90.cubin

Reads the ELF's `.nv.info` attributes (the per-kernel register count and stack frame the driver
uses for occupancy) and the `.nv.shared.<kernel>` sections. Prints, per kernel, the registers a
thread, the stack frame in bytes (non-zero means spills or a local array) and the static shared
memory, and how many blocks of the kernel's own `__launch_bounds__` thread count (from the
kernel's max-threads attribute) fit on an sm_90 SM by registers alone.
"""
import struct
import sys

EIFMT_SVAL = 0x04  # attribute with a payload of `size` bytes; other formats carry a 16-bit value
EIATTR_MAX_THREADS = 0x05
EIATTR_FRAME_SIZE = 0x11
EIATTR_REGCOUNT = 0x2F
REGS_PER_SM = 65536  # sm_80 and sm_90 register file
REG_ALLOC_UNIT = 256  # registers are allocated per warp in units of 256


def sections(data):
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    entsize, count, names_index = struct.unpack_from("<HHH", data, 0x3A)
    headers = []
    for i in range(count):
        name, kind, _, _, offset, size, link, _, _, ent = struct.unpack_from(
            "<IIQQQQIIQQ", data, shoff + i * entsize
        )
        headers.append((name, kind, offset, size, link, ent))
    names = headers[names_index]

    def text(table, at):
        start = table[2] + at
        return data[start : data.index(b"\0", start)].decode()

    return [(text(names, h[0]),) + h[1:] for h in headers], text, headers


def kernels(path):
    data = open(path, "rb").read()
    secs, text, raw = sections(data)
    symtab = next(s for s in secs if s[1] == 2)
    strtab = raw[symtab[4]]
    symbols = []
    for off in range(symtab[2], symtab[2] + symtab[3], 24):
        name = struct.unpack_from("<I", data, off)[0]
        symbols.append(text(strtab, name))
    info = {}
    for name, kind, offset, size, *_ in secs:
        if not name.startswith(".nv.info"):
            continue
        at = offset
        while at + 4 <= offset + size:
            fmt, attr, value = struct.unpack_from("<BBH", data, at)
            at += 4
            if fmt != EIFMT_SVAL:
                continue
            payload = data[at : at + value]
            at += value
            if attr in (EIATTR_REGCOUNT, EIATTR_FRAME_SIZE) and len(payload) >= 8:
                sym, v = struct.unpack_from("<II", payload)
                info.setdefault(symbols[sym], {})[attr] = v
            elif attr == EIATTR_MAX_THREADS and len(payload) >= 4 and name.startswith(".nv.info."):
                info.setdefault(name[len(".nv.info.") :], {})[attr] = struct.unpack_from("<I", payload)[0]
    shared = {n[len(".nv.shared.") :]: s for n, _, _, s, *_ in secs if n.startswith(".nv.shared.")}
    for kernel, attrs in sorted(info.items()):
        if EIATTR_REGCOUNT not in attrs:
            continue
        regs = attrs[EIATTR_REGCOUNT]
        threads = attrs.get(EIATTR_MAX_THREADS)
        fit = "-"
        if threads:
            per_warp = -(-regs * 32 // REG_ALLOC_UNIT) * REG_ALLOC_UNIT
            fit = REGS_PER_SM // (per_warp * (threads // 32))
        yield kernel, regs, attrs.get(EIATTR_FRAME_SIZE, 0), shared.get(kernel, 0), threads, fit


def main(paths):
    print("| cubin | kernel | registers | stack bytes | static shared bytes | launch bound | blocks/SM by registers |")
    print("|---|---|---|---|---|---|---|")
    for path in paths:
        for kernel, regs, frame, smem, threads, fit in kernels(path):
            print(f"| {path.rsplit('/', 1)[-1]} | {kernel} | {regs} | {frame} | {smem} | {threads or '-'} | {fit} |")


if __name__ == "__main__":
    main(sys.argv[1:])
