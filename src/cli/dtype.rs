//! The element types a file may hold, their NumPy spellings, and the dispatch from a run-time dtype to a Rust type.

use clap::ValueEnum;

/// An element type of a key file (and of a values file).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Dtype {
    U8,
    U16,
    U32,
    U64,
    I8,
    I16,
    I32,
    I64,
    F32,
    F64,
}

/// Every dtype, in the order `--help` lists them.
pub const ALL_DTYPES: [Dtype; 10] = [
    Dtype::U8,
    Dtype::U16,
    Dtype::U32,
    Dtype::U64,
    Dtype::I8,
    Dtype::I16,
    Dtype::I32,
    Dtype::I64,
    Dtype::F32,
    Dtype::F64,
];

impl Dtype {
    /// Bytes of one element.
    pub const fn size(self) -> usize {
        match self {
            Dtype::U8 | Dtype::I8 => 1,
            Dtype::U16 | Dtype::I16 => 2,
            Dtype::U32 | Dtype::I32 | Dtype::F32 => 4,
            Dtype::U64 | Dtype::I64 | Dtype::F64 => 8,
        }
    }

    /// The name `--dtype` takes and messages use (`u32`).
    pub const fn name(self) -> &'static str {
        match self {
            Dtype::U8 => "u8",
            Dtype::U16 => "u16",
            Dtype::U32 => "u32",
            Dtype::U64 => "u64",
            Dtype::I8 => "i8",
            Dtype::I16 => "i16",
            Dtype::I32 => "i32",
            Dtype::I64 => "i64",
            Dtype::F32 => "f32",
            Dtype::F64 => "f64",
        }
    }

    /// NumPy's kind character: `u` unsigned, `i` signed, `f` float.
    const fn kind(self) -> char {
        match self {
            Dtype::U8 | Dtype::U16 | Dtype::U32 | Dtype::U64 => 'u',
            Dtype::I8 | Dtype::I16 | Dtype::I32 | Dtype::I64 => 'i',
            Dtype::F32 | Dtype::F64 => 'f',
        }
    }

    /// The dtype of NumPy kind `kind` (`u`, `i`, `f`) and `size` bytes, if supported.
    pub fn from_kind(kind: char, size: usize) -> Option<Dtype> {
        ALL_DTYPES
            .into_iter()
            .find(|d| d.kind() == kind && d.size() == size)
    }

    /// The NumPy type string in this machine's byte order (`<u4` on x86; `|u1` for single
    /// bytes).
    pub fn npy_descr(self) -> String {
        let order = match (self.size(), cfg!(target_endian = "big")) {
            (1, _) => '|',
            (_, true) => '>',
            (_, false) => '<',
        };
        format!("{order}{}{}", self.kind(), self.size())
    }
}

impl std::fmt::Display for Dtype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Run `$body` with `$K` the Rust type of `$dtype` (a [`Dtype`] value).
macro_rules! with_key_type {
    ($dtype:expr, $K:ident => $body:expr) => {
        match $dtype {
            $crate::cli::Dtype::U8 => {
                type $K = u8;
                $body
            }
            $crate::cli::Dtype::U16 => {
                type $K = u16;
                $body
            }
            $crate::cli::Dtype::U32 => {
                type $K = u32;
                $body
            }
            $crate::cli::Dtype::U64 => {
                type $K = u64;
                $body
            }
            $crate::cli::Dtype::I8 => {
                type $K = i8;
                $body
            }
            $crate::cli::Dtype::I16 => {
                type $K = i16;
                $body
            }
            $crate::cli::Dtype::I32 => {
                type $K = i32;
                $body
            }
            $crate::cli::Dtype::I64 => {
                type $K = i64;
                $body
            }
            $crate::cli::Dtype::F32 => {
                type $K = f32;
                $body
            }
            $crate::cli::Dtype::F64 => {
                type $K = f64;
                $body
            }
        }
    };
}
pub(crate) use with_key_type;
