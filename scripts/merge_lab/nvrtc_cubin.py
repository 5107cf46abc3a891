#!/usr/bin/env python3
"""Compile one generated CUDA source to an sm_90 cubin with NVRTC, with twophase-gpu's options.

Usage: nvrtc_cubin.py SOURCE.cu OUT.cubin [ARCH]   (libnvrtc.so.13 on LD_LIBRARY_PATH)
"""
import ctypes
import sys

# crates/gpu/src/runtime/nvrtc.rs NVRTC_OPTIONS, plus the architecture.
OPTIONS = ["-std=c++17", "--device-as-default-execution-space"]
DEFAULT_ARCH = "90"


def main(source, cubin, arch=DEFAULT_ARCH):
    lib = ctypes.CDLL("libnvrtc.so.13")
    prog = ctypes.c_void_p()
    text = open(source, "rb").read()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), text, source.encode(), 0, None, None) != 0:
        sys.exit(f"{source}: nvrtcCreateProgram failed")
    opts = [f"--gpu-architecture=sm_{arch}".encode()] + [o.encode() for o in OPTIONS]
    rc = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    if log.value.strip():
        print(log.value.decode(), file=sys.stderr)
    if rc != 0:
        sys.exit(f"{source}: compile failed ({rc})")
    lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
    out = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetCUBIN(prog, out)
    open(cubin, "wb").write(out.raw)


if __name__ == "__main__":
    main(*sys.argv[1:])
