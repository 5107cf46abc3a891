//! Files of elements: `.npy` (header through npyz, data read and written in large blocks) or raw native-endian binary, with every way a file can be wrong named in one line.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use indicatif::ProgressBar;
use npyz::{DType, Endianness, TypeChar, WriterBuilder};

use super::error::CliError;
use super::output::PendingOutput;
use super::Dtype;

/// The first bytes of every .npy file.
const NPY_MAGIC: &[u8; 6] = b"\x93NUMPY";

/// Bytes read or written per step: large enough for full disk speed, small enough for a live
/// progress bar.
const IO_BLOCK: usize = 8 << 20;

/// How a file stores its elements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Format {
    /// A .npy file: its header's length and whether its elements are big-endian.
    Npy { data_offset: u64, big_endian: bool },
    /// Raw binary in this machine's byte order.
    Raw,
}

/// A file of elements, its header read and its size checked against it.
#[derive(Clone, Debug)]
pub struct ArrayFile {
    pub path: PathBuf,
    pub dtype: Dtype,
    pub len: usize,
    pub format: Format,
}

impl ArrayFile {
    /// Bytes of the data.
    pub fn data_bytes(&self) -> u64 {
        self.len as u64 * self.dtype.size() as u64
    }

    /// Whether the elements are stored in the opposite byte order of this machine (a .npy file
    /// of the other endianness; raw files are native by definition).
    fn swapped(&self) -> bool {
        match self.format {
            Format::Npy { big_endian, .. } => {
                self.dtype.size() > 1 && big_endian != cfg!(target_endian = "big")
            }
            Format::Raw => false,
        }
    }
}

/// Open `path` (`role` names it in messages: "input", "--values") and read what it holds: a
/// .npy file's header, or a raw file's size as elements of `dtype` (else `raw_default`: the
/// dtype of the other input of a merge or search). A `.npy` file must hold a 1-D array of a
/// supported dtype, agree with `dtype` if given, and hold exactly the bytes its header
/// promises; a raw file needs a dtype and a whole number of elements.
pub fn open(
    path: &Path,
    dtype: Option<Dtype>,
    raw_default: Option<Dtype>,
    role: &str,
) -> Result<ArrayFile, CliError> {
    let mut file = File::open(path).map_err(CliError::io(path))?;
    let meta = file.metadata().map_err(CliError::io(path))?;
    if !meta.is_file() {
        return Err(CliError::bad_input(
            path,
            "not a regular file (pipes and devices are not read: write the data to a file first)",
        ));
    }
    let file_bytes = meta.len();
    let mut magic = [0u8; NPY_MAGIC.len()];
    let is_npy = file.read_exact(&mut magic).is_ok() && &magic == NPY_MAGIC;
    file.rewind().map_err(CliError::io(path))?;
    if is_npy {
        open_npy(path, file, file_bytes, dtype)
    } else {
        open_raw(path, file_bytes, dtype.or(raw_default), role)
    }
}

fn open_raw(
    path: &Path,
    file_bytes: u64,
    dtype: Option<Dtype>,
    role: &str,
) -> Result<ArrayFile, CliError> {
    let Some(dtype) = dtype else {
        let flag = if role == "--values" {
            "--values-dtype"
        } else {
            "--dtype"
        };
        return Err(CliError::bad_input(
            path,
            format!("not a .npy file; give the element type of raw {role} with {flag}"),
        ));
    };
    let size = dtype.size() as u64;
    if !file_bytes.is_multiple_of(size) {
        return Err(CliError::bad_input(
            path,
            format!(
                "{file_bytes} bytes is not a whole number of {dtype} elements ({size} bytes \
                 each): truncated, or not {dtype}"
            ),
        ));
    }
    Ok(ArrayFile {
        path: path.to_owned(),
        dtype,
        len: to_len(path, file_bytes / size)?,
        format: Format::Raw,
    })
}

fn open_npy(
    path: &Path,
    file: File,
    file_bytes: u64,
    dtype: Option<Dtype>,
) -> Result<ArrayFile, CliError> {
    let mut reader = BufReader::new(file);
    let header = npyz::NpyHeader::from_reader(&mut reader)
        .map_err(|e| CliError::bad_input(path, format!("unreadable .npy header: {e}")))?;
    let data_offset = reader.stream_position().map_err(CliError::io(path))?;
    let (found, big_endian) = npy_dtype(path, &header.dtype())?;
    if let Some(asked) = dtype.filter(|&asked| asked != found) {
        return Err(CliError::bad_input(
            path,
            format!("holds {found}, but --dtype says {asked}"),
        ));
    }
    let shape = header.shape();
    if shape.len() != 1 {
        let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
        return Err(CliError::bad_input(
            path,
            format!(
                "has shape ({}); only 1-D arrays are read (reshape it to 1-D first)",
                dims.join(", ")
            ),
        ));
    }
    let len = shape[0];
    let size = found.size() as u64;
    let promised = len.saturating_mul(size);
    let present = file_bytes.saturating_sub(data_offset);
    if present < promised {
        return Err(CliError::bad_input(
            path,
            format!(
                "truncated: the header promises {len} {found} elements ({promised} bytes) but \
                 only {present} bytes follow it"
            ),
        ));
    }
    if present > promised {
        return Err(CliError::bad_input(
            path,
            format!(
                "{} bytes follow the {len} {found} elements the header promises: not a .npy \
                 file as NumPy writes it",
                present - promised
            ),
        ));
    }
    Ok(ArrayFile {
        path: path.to_owned(),
        dtype: found,
        len: to_len(path, len)?,
        format: Format::Npy {
            data_offset,
            big_endian,
        },
    })
}

/// The supported dtype of a .npy header and whether it is big-endian.
fn npy_dtype(path: &Path, dtype: &DType) -> Result<(Dtype, bool), CliError> {
    let unsupported = || {
        CliError::bad_input(
            path,
            format!(
                "holds {}, which is not sorted here: the dtypes are u8, u16, u32, u64, i8, i16, \
                 i32, i64, f32 and f64",
                dtype.descr()
            ),
        )
    };
    let DType::Plain(ts) = dtype else {
        return Err(unsupported());
    };
    let kind = match ts.type_char() {
        TypeChar::Uint => 'u',
        TypeChar::Int => 'i',
        TypeChar::Float => 'f',
        _ => return Err(unsupported()),
    };
    let size = usize::try_from(ts.size_field()).map_err(|_| unsupported())?;
    let found = Dtype::from_kind(kind, size).ok_or_else(unsupported)?;
    Ok((found, ts.endianness() == Endianness::Big))
}

/// A count of elements as `usize`.
fn to_len(path: &Path, len: u64) -> Result<usize, CliError> {
    usize::try_from(len)
        .map_err(|_| CliError::bad_input(path, format!("{len} elements do not fit in memory")))
}

/// Read the elements of `file`, which must hold `T` (of `file.dtype`'s size), into memory in
/// this machine's byte order, advancing `bar` by the bytes read.
pub fn read<T: bytemuck::Pod + Send>(
    file: &ArrayFile,
    bar: &ProgressBar,
    swap: impl Fn(T) -> T + Sync,
) -> Result<Vec<T>, CliError> {
    let path = &file.path;
    let mut data: Vec<T> = bytemuck::zeroed_vec(file.len);
    let mut source = File::open(path).map_err(CliError::io(path))?;
    if let Format::Npy { data_offset, .. } = file.format {
        source
            .seek(SeekFrom::Start(data_offset))
            .map_err(CliError::io(path))?;
    }
    for block in bytemuck::cast_slice_mut::<T, u8>(&mut data).chunks_mut(IO_BLOCK) {
        source.read_exact(block).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                CliError::bad_input(path, "the file shrank while it was read")
            } else {
                CliError::Io {
                    path: path.clone(),
                    source: e,
                }
            }
        })?;
        bar.inc(block.len() as u64);
    }
    if file.swapped() {
        use rayon::prelude::*;
        data.par_iter_mut().for_each(|x| *x = swap(*x));
    }
    Ok(data)
}

/// Whether `path` names a .npy file by its extension.
pub fn is_npy_path(path: &Path) -> bool {
    path.extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("npy"))
}

/// Write `data` to `out`: a .npy file of dtype `descr` (a NumPy type string such as `<u4`) when
/// the destination's name ends in `.npy`, else the raw bytes. Advances `bar` by the bytes
/// written.
pub fn write<T: bytemuck::Pod>(
    out: &mut PendingOutput,
    descr: &str,
    data: &[T],
    bar: &ProgressBar,
) -> Result<(), CliError> {
    if is_npy_path(out.destination()) {
        let header =
            npy_header(descr, data.len()).map_err(CliError::io(out.destination().to_owned()))?;
        out.write_all(&header)?;
    }
    for block in bytemuck::cast_slice::<T, u8>(data).chunks(IO_BLOCK) {
        out.write_all(block)?;
        bar.inc(block.len() as u64);
    }
    Ok(())
}

/// The header of a 1-D .npy file of `len` elements of type `descr`, as npyz writes it.
fn npy_header(descr: &str, len: usize) -> std::io::Result<Vec<u8>> {
    let type_str: npyz::TypeStr = descr
        .parse()
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    npyz::WriteOptions::new_header_only()
        .dtype(DType::Plain(type_str))
        .shape(&[len as u64])
        .writer(Vec::new())
        .write_header_only()
}
