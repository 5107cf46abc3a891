//! NVRTC: run-time compilation of a program's CUDA source to a cubin, keeping the log.

use std::ffi::CString;

use cudarc::nvrtc::{result as nvrtc_result, sys as nvrtc_sys};

use super::program::SNIPPET_LABELS;
use crate::error::GpuError;

/// Options given to NVRTC besides the architecture. C++17 for `constexpr`/`auto` in the kernels;
/// no fast-math: comparisons of floats must be exact.
pub const NVRTC_OPTIONS: &[&str] = &["-std=c++17", "--device-as-default-execution-space"];

/// Whether the NVRTC library can be loaded on this machine (no GPU needed).
pub fn nvrtc_available() -> bool {
    // SAFETY: only tries to dlopen the candidate library names; no symbol is called.
    unsafe { nvrtc_sys::is_culib_present() }
}

/// The NVRTC version as (major, minor).
pub fn nvrtc_version() -> Result<(i32, i32), GpuError> {
    if !nvrtc_available() {
        return Err(GpuError::NoNvrtc);
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: the library is present (checked above); both pointers are valid for writes.
    let status = unsafe { nvrtc_sys::nvrtcVersion(&mut major, &mut minor) };
    status.result().map_err(|e| GpuError::Nvrtc {
        call: "nvrtcVersion",
        message: format!("{e:?}"),
    })?;
    Ok((major, minor))
}

/// The options NVRTC gets for `arch` (e.g. 90 for sm_90): a real architecture, so that NVRTC
/// emits a cubin the driver loads without a JIT step.
pub fn nvrtc_options(arch: u32) -> Vec<String> {
    let mut options = vec![format!("--gpu-architecture=sm_{arch}")];
    options.extend(NVRTC_OPTIONS.iter().map(|s| s.to_string()));
    options
}

fn nvrtc_err(call: &'static str) -> impl FnOnce(nvrtc_result::NvrtcError) -> GpuError {
    move |e| GpuError::Nvrtc {
        call,
        message: format!("{e:?}"),
    }
}

/// Compile `source` (named `name` in NVRTC's messages) to a cubin for `sm_{arch}`. Needs NVRTC but
/// no GPU. A compilation error, or a warning located in a user snippet ([`SNIPPET_LABELS`]: a
/// comparator body without `return`, an expression with no effect), returns
/// [`GpuError::Compile`] with NVRTC's log.
pub fn compile_cubin(source: &str, name: &str, arch: u32) -> Result<Vec<u8>, GpuError> {
    let (cubin, log) = compile_cubin_with_log(source, name, arch)?;
    if has_snippet_warning(&log) {
        return Err(GpuError::Compile {
            name: name.to_owned(),
            arch,
            log: format!(
                "a user snippet compiled with warnings, which twophase treats as errors:\n{log}"
            ),
        });
    }
    Ok(cubin)
}

/// Whether NVRTC's `log` holds a warning located in a user snippet: a line
/// `<label ...>(<line>): warning ...` for one of [`SNIPPET_LABELS`].
pub fn has_snippet_warning(log: &str) -> bool {
    log.lines().any(|line| {
        SNIPPET_LABELS.iter().any(|label| line.starts_with(label))
            && line
                .split_once("): ")
                .is_some_and(|(_, rest)| rest.starts_with("warning"))
    })
}

/// [`compile_cubin`] without the check of the log: the cubin and NVRTC's log (empty when NVRTC
/// had nothing to say), so that callers can check that built-in code compiles without warnings.
pub fn compile_cubin_with_log(
    source: &str,
    name: &str,
    arch: u32,
) -> Result<(Vec<u8>, String), GpuError> {
    if !nvrtc_available() {
        return Err(GpuError::NoNvrtc);
    }
    let c_source = CString::new(source).map_err(|_| GpuError::Nvrtc {
        call: "nvrtcCreateProgram",
        message: format!("{name} contains a NUL byte"),
    })?;
    let c_name = CString::new(name).map_err(|_| GpuError::Nvrtc {
        call: "nvrtcCreateProgram",
        message: "program name contains a NUL byte".into(),
    })?;
    let program = nvrtc_result::create_program(&c_source, Some(&c_name))
        .map_err(nvrtc_err("nvrtcCreateProgram"))?;
    let options = nvrtc_options(arch);
    // SAFETY: `program` was just created and is destroyed once, below; `c_source` and `c_name`
    // outlive it.
    let compiled = unsafe { nvrtc_result::compile_program(program, &options) };
    // SAFETY: `program` is live; the log is read before it is destroyed.
    let log = unsafe { nvrtc_result::get_program_log(program) }
        .map(|chars| {
            let bytes: Vec<u8> = chars
                .iter()
                .take_while(|&&c| c != 0)
                .map(|&c| c as u8)
                .collect();
            String::from_utf8_lossy(&bytes).into_owned()
        })
        .unwrap_or_else(|e| format!("(no log: {e:?})"));
    let outcome = match compiled {
        Ok(()) => read_cubin(program).map(|cubin| (cubin, log)),
        Err(_) => Err(GpuError::Compile {
            name: name.to_owned(),
            arch,
            log,
        }),
    };
    // SAFETY: `program` is live and not used after this.
    unsafe { nvrtc_result::destroy_program(program) }.map_err(nvrtc_err("nvrtcDestroyProgram"))?;
    outcome
}

fn read_cubin(program: nvrtc_sys::nvrtcProgram) -> Result<Vec<u8>, GpuError> {
    let mut size = 0usize;
    // SAFETY: `program` was compiled successfully; `size` is valid for writes.
    unsafe { nvrtc_sys::nvrtcGetCUBINSize(program, &mut size) }
        .result()
        .map_err(nvrtc_err("nvrtcGetCUBINSize"))?;
    let mut cubin = vec![0u8; size];
    // SAFETY: `cubin` holds exactly the `size` bytes NVRTC reported.
    unsafe { nvrtc_sys::nvrtcGetCUBIN(program, cubin.as_mut_ptr().cast()) }
        .result()
        .map_err(nvrtc_err("nvrtcGetCUBIN"))?;
    Ok(cubin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippet_warnings_are_told_from_others() {
        let snippet = "comparator by_key(3): warning #940-D: missing return statement at end of \
                       non-void function\n";
        let helpers = "comparator by_key helpers(1): warning #177-D: variable \"y\" was declared \
                       but never referenced\n";
        let key = "key type pair(1): warning #1-D: something\n";
        let generated = "twophase_merge.cu(7): warning #177-D: variable \"y\" was declared\n";
        let error = "comparator by_key(2): error: identifier \"c\" is undefined\n";
        assert!(has_snippet_warning(snippet));
        assert!(has_snippet_warning(helpers));
        assert!(has_snippet_warning(key));
        assert!(!has_snippet_warning(generated));
        assert!(!has_snippet_warning(error));
        assert!(!has_snippet_warning(""));
    }
}
