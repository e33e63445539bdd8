//! Reading the two tiny files discovery needs (the port file and the token
//! file) without ever blocking, and saying truly why one could not be read.
//!
//! The kind of thing at the path is looked at before it is opened: opening a
//! FIFO for reading waits for a writer, and on Windows opening a directory
//! fails with "Access denied", which reads like a permissions problem when it
//! is not one. On Unix the open is also non-blocking, so a regular file
//! swapped for a FIFO between the look and the open still cannot hang, and
//! the opened handle is looked at once more.

use std::fs;
use std::io::{self, Read};
use std::path::Path;

/// At most this much is read: a port or a token is a few dozen bytes, and a
/// wrong path that points at something big costs nothing.
const MAX_BYTES: u64 = 4096;

/// Why a file that exists gave no content.
#[derive(Debug)]
pub(crate) enum Unreadable {
    Directory,
    /// A FIFO, socket or device, named as the user would know it.
    NotRegular(&'static str),
    /// Windows: another program holds it open without sharing it.
    #[cfg_attr(not(windows), allow(dead_code))]
    HeldOpen(io::Error),
    PermissionDenied(io::Error),
    /// The operating system refuses the name itself (Windows: os error 123).
    InvalidName(io::Error),
    /// A part of the path before the file name is a file, not a folder.
    NotADirectory(io::Error),
    Other(io::Error),
}

impl Unreadable {
    /// A short machine name for `detail.problem`.
    pub(crate) fn code(&self) -> &'static str {
        match self {
            Unreadable::Directory => "directory",
            Unreadable::NotRegular(_) => "not_a_regular_file",
            Unreadable::HeldOpen(_) => "held_open",
            Unreadable::PermissionDenied(_) => "permission_denied",
            Unreadable::InvalidName(_) => "invalid_name",
            Unreadable::NotADirectory(_) => "not_a_directory",
            Unreadable::Other(_) => "unreadable",
        }
    }

    /// What the path is, as the rest of a sentence that starts with the path.
    pub(crate) fn what(&self) -> String {
        match self {
            Unreadable::Directory => "is a directory, not a file".into(),
            Unreadable::NotRegular(kind) => format!("is {kind}, not a regular file, so it was not opened"),
            Unreadable::HeldOpen(error) => {
                format!("is held open by another program that does not let others read it ({error})")
            }
            Unreadable::PermissionDenied(error) => {
                format!("exists, but this server's user is not allowed to read it ({error})")
            }
            Unreadable::InvalidName(error) => format!("is not a name this system accepts ({error})"),
            Unreadable::NotADirectory(error) => {
                format!("cannot exist: a part of that path is a file, not a folder ({error})")
            }
            Unreadable::Other(error) => format!("exists but cannot be read ({error})"),
        }
    }
}

/// The bytes of a small regular file; `Ok(None)` when nothing is at the path.
pub(crate) fn read_small(path: &Path) -> Result<Option<Vec<u8>>, Unreadable> {
    let metadata = match fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(classify(error)),
    };
    check_kind(&metadata)?;
    let file = match open_nonblocking(path) {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(classify(error)),
    };
    // The path may have been replaced between the look and the open.
    check_kind(&file.metadata().map_err(classify)?)?;
    let mut bytes = Vec::new();
    file.take(MAX_BYTES).read_to_end(&mut bytes).map_err(classify)?;
    Ok(Some(bytes))
}

fn check_kind(metadata: &fs::Metadata) -> Result<(), Unreadable> {
    if metadata.is_dir() {
        return Err(Unreadable::Directory);
    }
    if !metadata.is_file() {
        return Err(Unreadable::NotRegular(special_kind(metadata)));
    }
    Ok(())
}

#[cfg(unix)]
fn special_kind(metadata: &fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let kind = metadata.file_type();
    if kind.is_fifo() {
        "a named pipe (FIFO)"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else {
        "a special file"
    }
}

#[cfg(not(unix))]
fn special_kind(_metadata: &fs::Metadata) -> &'static str {
    "a device or other special file"
}

/// O_NONBLOCK, without a libc dependency. Its value is the same on the Linux
/// architectures listed, and on macOS and the BSDs; elsewhere the look
/// before the open is the only guard.
#[cfg(unix)]
fn nonblock_flag() -> Option<i32> {
    if cfg!(all(
        target_os = "linux",
        any(
            target_arch = "x86_64",
            target_arch = "x86",
            target_arch = "aarch64",
            target_arch = "arm",
            target_arch = "riscv64",
            target_arch = "s390x",
            target_arch = "powerpc64",
            target_arch = "loongarch64"
        )
    )) {
        Some(0o4000)
    } else if cfg!(any(
        target_os = "macos",
        target_os = "ios",
        target_os = "freebsd",
        target_os = "openbsd",
        target_os = "netbsd"
    )) {
        Some(0x4)
    } else {
        None
    }
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> io::Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut options = fs::OpenOptions::new();
    options.read(true);
    if let Some(flag) = nonblock_flag() {
        options.custom_flags(flag);
    }
    options.open(path)
}

/// Windows has no FIFO a path can name by accident; a plain open does not wait.
#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> io::Result<fs::File> {
    fs::File::open(path)
}

/// Names the error as what it means here. Windows' codes are read directly,
/// because its "Access denied" also covers a directory and a file being
/// deleted, and `ErrorKind` merges those with real denials.
fn classify(error: io::Error) -> Unreadable {
    #[cfg(windows)]
    {
        // ERROR_SHARING_VIOLATION, ERROR_LOCK_VIOLATION
        if matches!(error.raw_os_error(), Some(32 | 33)) {
            return Unreadable::HeldOpen(error);
        }
        // ERROR_INVALID_NAME, ERROR_BAD_PATHNAME, ERROR_DIRECTORY
        if matches!(error.raw_os_error(), Some(123 | 161 | 267)) {
            return Unreadable::InvalidName(error);
        }
    }
    match error.kind() {
        io::ErrorKind::PermissionDenied => Unreadable::PermissionDenied(error),
        io::ErrorKind::IsADirectory => Unreadable::Directory,
        io::ErrorKind::NotADirectory => Unreadable::NotADirectory(error),
        io::ErrorKind::InvalidFilename => Unreadable::InvalidName(error),
        _ => Unreadable::Other(error),
    }
}

/// A small file's text, and how it was encoded.
#[derive(Debug, PartialEq, Eq)]
pub enum Text {
    /// UTF-8 (invalid bytes shown as U+FFFD).
    Plain(String),
    /// UTF-8 after a byte-order mark, which Notepad and PowerShell 7 may
    /// write; the mark is not part of the text.
    Utf8Bom(String),
    /// UTF-16, what Windows PowerShell's `>` and "Unicode" in Notepad write.
    /// Decoded so that a message can show what it says.
    Utf16 { text: String, order: &'static str },
}

impl Text {
    pub(crate) fn text(&self) -> &str {
        match self {
            Text::Plain(text) | Text::Utf8Bom(text) | Text::Utf16 { text, .. } => text,
        }
    }
}

pub fn decode_text(bytes: &[u8]) -> Text {
    if let Some(rest) = bytes.strip_prefix(b"\xEF\xBB\xBF") {
        return Text::Utf8Bom(String::from_utf8_lossy(rest).into_owned());
    }
    if let Some(rest) = bytes.strip_prefix(b"\xFF\xFE") {
        return Text::Utf16 { text: utf16(rest, u16::from_le_bytes), order: "UTF-16LE" };
    }
    if let Some(rest) = bytes.strip_prefix(b"\xFE\xFF") {
        return Text::Utf16 { text: utf16(rest, u16::from_be_bytes), order: "UTF-16BE" };
    }
    // Without a mark, ASCII saved as UTF-16 has a zero in every other byte.
    if bytes.len() >= 2 && bytes.len().is_multiple_of(2) {
        let zero_at = |parity: usize| bytes.iter().skip(parity).step_by(2).all(|byte| *byte == 0);
        if zero_at(1) && !zero_at(0) {
            return Text::Utf16 { text: utf16(bytes, u16::from_le_bytes), order: "UTF-16LE" };
        }
        if zero_at(0) && !zero_at(1) {
            return Text::Utf16 { text: utf16(bytes, u16::from_be_bytes), order: "UTF-16BE" };
        }
    }
    Text::Plain(String::from_utf8_lossy(bytes).into_owned())
}

fn utf16(bytes: &[u8], unit: fn([u8; 2]) -> u16) -> String {
    let units: Vec<u16> = bytes.chunks_exact(2).map(|pair| unit([pair[0], pair[1]])).collect();
    String::from_utf16_lossy(&units)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utf16le(text: &str, bom: bool) -> Vec<u8> {
        let mut bytes = if bom { vec![0xFF, 0xFE] } else { Vec::new() };
        bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        bytes
    }

    #[test]
    fn encodings_are_told_apart() {
        assert_eq!(decode_text(b"8742"), Text::Plain("8742".into()));
        assert_eq!(decode_text(b"\xEF\xBB\xBF8742\r\n"), Text::Utf8Bom("8742\r\n".into()));
        assert_eq!(
            decode_text(&utf16le("8742\r\n", true)),
            Text::Utf16 { text: "8742\r\n".into(), order: "UTF-16LE" }
        );
        assert_eq!(
            decode_text(&utf16le("8742", false)),
            Text::Utf16 { text: "8742".into(), order: "UTF-16LE" }
        );
        let be: Vec<u8> = "8742".encode_utf16().flat_map(u16::to_be_bytes).collect();
        assert_eq!(decode_text(&be), Text::Utf16 { text: "8742".into(), order: "UTF-16BE" });
        assert_eq!(decode_text(b"87"), Text::Plain("87".into()));
        assert_eq!(decode_text(b""), Text::Plain(String::new()));
    }
}
