//! The two archive formats a release needs, written directly: `.zip` (the
//! bundle itself, and the Windows archive) and `.tar.gz` (the unix archives).
//!
//! Written here rather than through an archive crate because the details
//! matter and are few: no directory entries in a zip (the official `mcpb
//! unpack` writes every entry as a file), Unix modes in the zip's external
//! attributes (that is where it and `unzip` restore the executable bit from),
//! and one fixed timestamp, so that the same sources give the same bytes and
//! the same SHA256SUMS.

use std::io::Write;

use flate2::Compression;
use flate2::GzBuilder;
use flate2::write::DeflateEncoder;

pub struct Entry {
    /// Path inside the archive, `/`-separated.
    pub name: String,
    pub data: Vec<u8>,
    pub executable: bool,
}

impl Entry {
    pub fn file(name: impl Into<String>, data: Vec<u8>) -> Entry {
        Entry { name: name.into(), data, executable: false }
    }

    pub fn executable(name: impl Into<String>, data: Vec<u8>) -> Entry {
        Entry { name: name.into(), data, executable: true }
    }

    fn mode(&self) -> u32 {
        if self.executable { 0o755 } else { 0o644 }
    }
}

/// A zip archive: deflated entries, UTF-8 names, Unix modes, no zip64
/// (refused past 4 GiB, which nothing here comes near).
pub fn zip(entries: &[Entry], mtime: u64) -> anyhow::Result<Vec<u8>> {
    let (time, date) = dos_time(mtime);
    let mut out = Vec::new();
    let mut central = Vec::new();
    for entry in entries {
        anyhow::ensure!(!entry.name.ends_with('/'), "zip entry {:?} is a directory", entry.name);
        let mut crc = flate2::Crc::new();
        crc.update(&entry.data);
        let mut encoder = DeflateEncoder::new(Vec::new(), Compression::best());
        encoder.write_all(&entry.data)?;
        let packed = encoder.finish()?;
        let offset = u32::try_from(out.len())?;
        let packed_len = u32::try_from(packed.len())?;
        let plain_len = u32::try_from(entry.data.len())?;
        let name_len = u16::try_from(entry.name.len())?;
        // Local file header.
        out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        out.extend_from_slice(&20u16.to_le_bytes()); // version needed: 2.0 (deflate)
        out.extend_from_slice(&0x0800u16.to_le_bytes()); // flags: names are UTF-8
        out.extend_from_slice(&8u16.to_le_bytes()); // method: deflate
        out.extend_from_slice(&time.to_le_bytes());
        out.extend_from_slice(&date.to_le_bytes());
        out.extend_from_slice(&crc.sum().to_le_bytes());
        out.extend_from_slice(&packed_len.to_le_bytes());
        out.extend_from_slice(&plain_len.to_le_bytes());
        out.extend_from_slice(&name_len.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes()); // no extra field
        out.extend_from_slice(entry.name.as_bytes());
        out.extend_from_slice(&packed);
        // Its central directory record.
        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        central.extend_from_slice(&((3u16 << 8) | 20).to_le_bytes()); // made by: Unix, 2.0
        central.extend_from_slice(&20u16.to_le_bytes());
        central.extend_from_slice(&0x0800u16.to_le_bytes());
        central.extend_from_slice(&8u16.to_le_bytes());
        central.extend_from_slice(&time.to_le_bytes());
        central.extend_from_slice(&date.to_le_bytes());
        central.extend_from_slice(&crc.sum().to_le_bytes());
        central.extend_from_slice(&packed_len.to_le_bytes());
        central.extend_from_slice(&plain_len.to_le_bytes());
        central.extend_from_slice(&name_len.to_le_bytes());
        central.extend_from_slice(&0u16.to_le_bytes()); // extra
        central.extend_from_slice(&0u16.to_le_bytes()); // comment
        central.extend_from_slice(&0u16.to_le_bytes()); // disk
        central.extend_from_slice(&0u16.to_le_bytes()); // internal attributes
        // External attributes: the Unix file type and mode in the high half.
        central.extend_from_slice(&((0o100_000 | entry.mode()) << 16).to_le_bytes());
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(entry.name.as_bytes());
    }
    let count = u16::try_from(entries.len())?;
    let central_offset = u32::try_from(out.len())?;
    let central_len = u32::try_from(central.len())?;
    out.extend_from_slice(&central);
    // End of central directory.
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&central_len.to_le_bytes());
    out.extend_from_slice(&central_offset.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    u32::try_from(out.len())?;
    Ok(out)
}

/// A gzip-compressed ustar archive holding `folder/` and the entries inside it.
pub fn tar_gz(folder: &str, entries: &[Entry], mtime: u64) -> anyhow::Result<Vec<u8>> {
    let mut tar = Vec::new();
    tar.extend_from_slice(&ustar_header(&format!("{folder}/"), 0o755, 0, mtime, b'5')?);
    for entry in entries {
        let name = format!("{folder}/{}", entry.name);
        tar.extend_from_slice(&ustar_header(&name, entry.mode(), entry.data.len() as u64, mtime, b'0')?);
        tar.extend_from_slice(&entry.data);
        tar.resize(tar.len().next_multiple_of(512), 0);
    }
    // Two empty blocks end the archive; pad to tar's usual 10 KiB record.
    tar.resize(tar.len() + 1024, 0);
    tar.resize(tar.len().next_multiple_of(10240), 0);
    let mut gz = GzBuilder::new().mtime(u32::try_from(mtime)?).write(Vec::new(), Compression::best());
    gz.write_all(&tar)?;
    Ok(gz.finish()?)
}

fn ustar_header(name: &str, mode: u32, size: u64, mtime: u64, kind: u8) -> anyhow::Result<[u8; 512]> {
    anyhow::ensure!(name.len() <= 100 && name.is_ascii(), "tar entry name {name:?} is longer than 100 bytes");
    let mut header = [0u8; 512];
    let mut put = |at: usize, bytes: &[u8]| header[at..at + bytes.len()].copy_from_slice(bytes);
    put(0, name.as_bytes());
    put(100, format!("{mode:07o}\0").as_bytes());
    put(108, b"0000000\0"); // uid
    put(116, b"0000000\0"); // gid
    put(124, format!("{size:011o}\0").as_bytes());
    put(136, format!("{mtime:011o}\0").as_bytes());
    put(148, b"        "); // the checksum counts its own field as spaces
    put(156, &[kind]);
    put(257, b"ustar\0");
    put(263, b"00");
    put(265, b"root");
    put(297, b"root");
    let sum: u32 = header.iter().map(|&byte| u32::from(byte)).sum();
    header[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    Ok(header)
}

/// Unix seconds as MS-DOS time and date (UTC, two-second steps, 1980 at the
/// earliest, which is all the zip format can say).
fn dos_time(unix: u64) -> (u16, u16) {
    let unix = unix.max(315_532_800); // 1980-01-01
    let days = (unix / 86_400) as i64;
    let seconds = unix % 86_400;
    let (year, month, day) = civil_from_days(days);
    let time = ((seconds / 3600) << 11) | (((seconds % 3600) / 60) << 5) | ((seconds % 60) / 2);
    let date = ((year - 1980) << 9) | (month << 5) | day;
    (time as u16, date as u16)
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian
/// (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year as u64, month as u64, day as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_convert_like_the_calendar() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
        assert_eq!(civil_from_days(20_818), (2026, 12, 31));
        // 2026-12-01 20:30:10 UTC
        let (time, date) = dos_time(1_796_157_010);
        assert_eq!((date >> 9, (date >> 5) & 15, date & 31), (46, 12, 1));
        assert_eq!((time >> 11, (time >> 5) & 63, (time & 31) * 2), (20, 30, 10));
        assert_eq!(dos_time(0), dos_time(315_532_800), "before 1980 is clamped");
    }

    #[test]
    fn a_zip_lists_its_entries_with_modes_and_no_directories() {
        let entries =
            [Entry::executable("server/x/bin", vec![7; 5000]), Entry::file("manifest.json", b"{}".to_vec())];
        let zip = zip(&entries, 1_796_157_010).unwrap();
        let end = zip.len() - 22;
        assert_eq!(&zip[end..end + 4], &0x0605_4b50u32.to_le_bytes());
        assert_eq!(u16::from_le_bytes([zip[end + 10], zip[end + 11]]), 2);
        let mut at = u32::from_le_bytes(zip[end + 16..end + 20].try_into().unwrap()) as usize;
        let mut seen = Vec::new();
        for _ in 0..2 {
            assert_eq!(&zip[at..at + 4], &0x0201_4b50u32.to_le_bytes());
            let name_len = u16::from_le_bytes([zip[at + 28], zip[at + 29]]) as usize;
            let attributes = u32::from_le_bytes(zip[at + 38..at + 42].try_into().unwrap());
            let name = String::from_utf8(zip[at + 46..at + 46 + name_len].to_vec()).unwrap();
            seen.push((name, (attributes >> 16) & 0o777));
            at += 46 + name_len;
        }
        assert_eq!(seen, [("server/x/bin".to_string(), 0o755), ("manifest.json".to_string(), 0o644)]);
        assert_eq!(zip, super::zip(&entries, 1_796_157_010).unwrap(), "same input, same bytes");
    }

    #[test]
    fn a_tar_header_carries_a_valid_checksum() {
        let header = ustar_header("a/b", 0o755, 12, 0, b'0').unwrap();
        let stored = u32::from_str_radix(std::str::from_utf8(&header[148..154]).unwrap(), 8).unwrap();
        let mut blank = header;
        blank[148..156].copy_from_slice(b"        ");
        assert_eq!(stored, blank.iter().map(|&b| u32::from(b)).sum::<u32>());
        assert!(ustar_header(&"x".repeat(101), 0o644, 0, 0, b'0').is_err());
    }
}
