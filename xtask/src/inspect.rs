//! Reads a built binary's headers, so that a bundle only claims a platform
//! whose binary really is what that platform runs: an x86_64 ELF with no
//! dynamic loader for Linux, an x86_64 PE for Windows, and for macOS a
//! universal Mach-O whose arm64 half carries an intact code signature.
//!
//! The signature matters because macOS on Apple Silicon refuses to run arm64
//! code that has none; Apple's linker, and zig's, add an ad-hoc one. A later
//! rewrite of the file (a strip, say) would leave the page hashes stale, so
//! they are recomputed here and compared.

use sha2::{Digest, Sha256};

const CPU_X86_64: u32 = 0x0100_0007;
const CPU_ARM64: u32 = 0x0100_000c;

fn u16_le(data: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(data.get(at..at + 2)?.try_into().ok()?))
}

fn u32_le(data: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(data.get(at..at + 4)?.try_into().ok()?))
}

fn u64_le(data: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(data.get(at..at + 8)?.try_into().ok()?))
}

fn u32_be(data: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(data.get(at..at + 4)?.try_into().ok()?))
}

/// Whether an x86_64 Linux executable names a dynamic loader (PT_INTERP).
/// One that does not runs on any distribution, whatever its libc.
pub fn linux_x86_64_needs_loader(data: &[u8]) -> Result<bool, String> {
    if data.get(..4) != Some(b"\x7fELF") || data.get(4) != Some(&2) || data.get(5) != Some(&1) {
        return Err("not a 64-bit little-endian ELF file".into());
    }
    if u16_le(data, 0x12) != Some(62) {
        return Err("not an x86_64 ELF file".into());
    }
    let table = u64_le(data, 0x20).ok_or("truncated ELF header")? as usize;
    let size = usize::from(u16_le(data, 0x36).ok_or("truncated ELF header")?);
    let count = usize::from(u16_le(data, 0x38).ok_or("truncated ELF header")?);
    for index in 0..count {
        if u32_le(data, table + index * size).ok_or("truncated program header table")? == 3 {
            return Ok(true);
        }
    }
    Ok(false)
}

/// An x86_64 Windows PE executable.
pub fn check_windows_x86_64(data: &[u8]) -> Result<(), String> {
    if data.get(..2) != Some(b"MZ") {
        return Err("not a PE file (no MZ header)".into());
    }
    let pe = u32_le(data, 0x3c).ok_or("truncated DOS header")? as usize;
    if data.get(pe..pe + 4) != Some(b"PE\0\0") {
        return Err("not a PE file (no PE signature)".into());
    }
    if u16_le(data, pe + 4) != Some(0x8664) {
        return Err("not an x86_64 PE file".into());
    }
    Ok(())
}

/// What a universal macOS file holds.
pub struct Halves {
    pub arm64: usize,
    pub arm64_oldest: String,
    pub intel: usize,
    pub intel_oldest: String,
}

/// A universal Mach-O with an x86_64 and an arm64 slice, the arm64 one
/// signed, each naming the oldest macOS it runs on.
pub fn check_universal_macos(data: &[u8]) -> Result<Halves, String> {
    let slices = macho_slices(data)?;
    let find = |cpu: u32| slices.iter().find(|(kind, _)| *kind == cpu).map(|(_, slice)| *slice);
    let intel = find(CPU_X86_64).ok_or("the universal file has no x86_64 slice")?;
    let arm64 = find(CPU_ARM64).ok_or("the universal file has no arm64 slice")?;
    check_signature(arm64)
        .map_err(|why| format!("its arm64 slice {why}, and Apple Silicon would not run it"))?;
    Ok(Halves {
        arm64: arm64.len(),
        arm64_oldest: oldest_macos(arm64)?,
        intel: intel.len(),
        intel_oldest: oldest_macos(intel)?,
    })
}

/// A thin arm64 or x86_64 Mach-O (a host build on a Mac without the other
/// half): its CPU and the oldest macOS it runs on.
pub fn check_thin_macos(data: &[u8]) -> Result<(&'static str, String), String> {
    match macho_slices(data)?.as_slice() {
        [(CPU_ARM64, slice)] => {
            check_signature(slice).map_err(|why| format!("it {why}"))?;
            Ok(("arm64", oldest_macos(slice)?))
        }
        [(CPU_X86_64, slice)] => Ok(("x86_64", oldest_macos(slice)?)),
        _ => Err("not a thin arm64 or x86_64 Mach-O file".into()),
    }
}

/// The oldest macOS a slice says it runs on (LC_BUILD_VERSION's minos, or
/// the older LC_VERSION_MIN_MACOSX), as "11.0".
fn oldest_macos(slice: &[u8]) -> Result<String, String> {
    let commands = u32_le(slice, 16).ok_or("truncated Mach-O header")?;
    let mut at = 32;
    for _ in 0..commands {
        let command = u32_le(slice, at).ok_or("truncated load commands")?;
        let version = match command {
            0x32 => u32_le(slice, at + 12),
            0x24 => u32_le(slice, at + 8),
            _ => None,
        };
        if let Some(version) = version {
            let (major, minor, patch) = (version >> 16, (version >> 8) & 0xff, version & 0xff);
            return Ok(if patch == 0 {
                format!("{major}.{minor}")
            } else {
                format!("{major}.{minor}.{patch}")
            });
        }
        at += (u32_le(slice, at + 4).ok_or("truncated load commands")? as usize).max(8);
    }
    Err("names no minimum macOS version".into())
}

/// The (cpu type, bytes) of each architecture in a thin or fat Mach-O file.
fn macho_slices(data: &[u8]) -> Result<Vec<(u32, &[u8])>, String> {
    match u32_be(data, 0) {
        Some(0xcafe_babe) => {
            let count = u32_be(data, 4).ok_or("truncated fat header")? as usize;
            let mut slices = Vec::new();
            for index in 0..count {
                let at = 8 + index * 20;
                let cpu = u32_be(data, at).ok_or("truncated fat header")?;
                let offset = u32_be(data, at + 8).ok_or("truncated fat header")? as usize;
                let size = u32_be(data, at + 12).ok_or("truncated fat header")? as usize;
                let slice = data.get(offset..offset + size).ok_or("a fat slice lies past the end")?;
                slices.push((cpu, slice));
            }
            Ok(slices)
        }
        Some(0xcffa_edfe) => Ok(vec![(u32_le(data, 4).ok_or("truncated Mach-O header")?, data)]),
        _ => Err("not a Mach-O file".into()),
    }
}

/// A 64-bit Mach-O slice's code signature: present, and every page hash of
/// its code directory equal to the SHA-256 of that page.
fn check_signature(slice: &[u8]) -> Result<(), String> {
    let truncated = || "is truncated".to_string();
    let commands = u32_le(slice, 16).ok_or_else(truncated)?;
    let mut at = 32;
    let mut signature = None;
    for _ in 0..commands {
        let command = u32_le(slice, at).ok_or_else(truncated)?;
        let size = u32_le(slice, at + 4).ok_or_else(truncated)? as usize;
        if command == 0x1d {
            // LC_CODE_SIGNATURE: where the signature blob lies in the file.
            let offset = u32_le(slice, at + 8).ok_or_else(truncated)? as usize;
            let length = u32_le(slice, at + 12).ok_or_else(truncated)? as usize;
            signature = Some(slice.get(offset..offset + length).ok_or_else(truncated)?);
        }
        at += size.max(8);
    }
    let blob = signature.ok_or("carries no code signature")?;
    if u32_be(blob, 0) != Some(0xfade_0cc0) {
        return Err("has a code signature that is not a signature blob".into());
    }
    let count = u32_be(blob, 8).ok_or_else(truncated)? as usize;
    for index in 0..count {
        let offset = u32_be(blob, 12 + index * 8 + 4).ok_or_else(truncated)? as usize;
        let directory = blob.get(offset..).ok_or_else(truncated)?;
        if u32_be(directory, 0) != Some(0xfade_0c02) {
            continue; // requirements, entitlements, a CMS signature: not page hashes
        }
        let hash_offset = u32_be(directory, 16).ok_or_else(truncated)? as usize;
        let pages = u32_be(directory, 28).ok_or_else(truncated)? as usize;
        let code_limit = u32_be(directory, 32).ok_or_else(truncated)? as usize;
        let (hash_size, hash_type, page_shift) =
            (directory.get(36), directory.get(37), directory.get(39).map(|&shift| shift as u32));
        if hash_size != Some(&32) || hash_type != Some(&2) {
            return Err("has a code directory that does not use SHA-256".into());
        }
        let page = 1usize << page_shift.ok_or_else(truncated)?;
        for number in 0..pages {
            let start = number * page;
            let code = slice.get(start..(start + page).min(code_limit)).ok_or_else(truncated)?;
            let stored = directory.get(hash_offset + number * 32..hash_offset + number * 32 + 32);
            if stored != Some(Sha256::digest(code).as_slice()) {
                return Err(format!("has a code signature whose hash of page {number} is stale"));
            }
        }
        return Ok(());
    }
    Err("has a code signature without a code directory".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ELF header with one program header of the given type.
    fn elf(program_type: u32) -> Vec<u8> {
        let mut data = vec![0u8; 64 + 56];
        data[..6].copy_from_slice(b"\x7fELF\x02\x01");
        data[0x12..0x14].copy_from_slice(&62u16.to_le_bytes());
        data[0x20..0x28].copy_from_slice(&64u64.to_le_bytes());
        data[0x36..0x38].copy_from_slice(&56u16.to_le_bytes());
        data[0x38..0x3a].copy_from_slice(&1u16.to_le_bytes());
        data[64..68].copy_from_slice(&program_type.to_le_bytes());
        data
    }

    #[test]
    fn a_loader_makes_an_elf_dynamic() {
        assert_eq!(linux_x86_64_needs_loader(&elf(1)), Ok(false));
        assert_eq!(linux_x86_64_needs_loader(&elf(3)), Ok(true));
        assert!(linux_x86_64_needs_loader(b"MZ").is_err());
        let mut arm = elf(1);
        arm[0x12] = 183;
        assert!(linux_x86_64_needs_loader(&arm).is_err());
    }

    /// A thin arm64 Mach-O of three 4 KiB pages, signed over its first 8 KiB.
    fn signed_macho(tamper: bool, dated: bool) -> Vec<u8> {
        let mut data = vec![0u8; 3 * 4096];
        data[..4].copy_from_slice(&0xfeed_facfu32.to_le_bytes());
        data[4..8].copy_from_slice(&CPU_ARM64.to_le_bytes());
        data[16..20].copy_from_slice(&2u32.to_le_bytes());
        data[32..36].copy_from_slice(&0x1du32.to_le_bytes());
        data[36..40].copy_from_slice(&16u32.to_le_bytes());
        data[40..44].copy_from_slice(&8192u32.to_le_bytes());
        data[44..48].copy_from_slice(&4096u32.to_le_bytes());
        // LC_BUILD_VERSION: macOS, minos 11.0.
        data[48..52].copy_from_slice(&(if dated { 0x32u32 } else { 0x19 }).to_le_bytes());
        data[52..56].copy_from_slice(&24u32.to_le_bytes());
        data[56..60].copy_from_slice(&1u32.to_le_bytes());
        data[60..64].copy_from_slice(&0x000b_0000u32.to_le_bytes());
        data[100..200].fill(0xab);
        let mut directory = vec![0u8; 44];
        directory[..4].copy_from_slice(&0xfade_0c02u32.to_be_bytes());
        directory[16..20].copy_from_slice(&44u32.to_be_bytes());
        directory[28..32].copy_from_slice(&2u32.to_be_bytes());
        directory[32..36].copy_from_slice(&8192u32.to_be_bytes());
        directory[36] = 32;
        directory[37] = 2;
        directory[39] = 12;
        for page in 0..2 {
            directory.extend_from_slice(&Sha256::digest(&data[page * 4096..(page + 1) * 4096]));
        }
        let mut blob = Vec::new();
        blob.extend_from_slice(&0xfade_0cc0u32.to_be_bytes());
        blob.extend_from_slice(&0u32.to_be_bytes());
        blob.extend_from_slice(&1u32.to_be_bytes());
        blob.extend_from_slice(&0u32.to_be_bytes());
        blob.extend_from_slice(&20u32.to_be_bytes());
        blob.extend_from_slice(&directory);
        data[8192..8192 + blob.len()].copy_from_slice(&blob);
        if tamper {
            data[5000] ^= 1;
        }
        data
    }

    #[test]
    fn a_signature_is_checked_page_by_page() {
        assert_eq!(check_thin_macos(&signed_macho(false, true)), Ok(("arm64", "11.0".to_string())));
        let stale = check_thin_macos(&signed_macho(true, true)).unwrap_err();
        assert!(stale.contains("page 1 is stale"), "{stale}");
        let mut unsigned = signed_macho(false, true);
        unsigned[32..36].copy_from_slice(&0x19u32.to_le_bytes());
        assert!(check_thin_macos(&unsigned).unwrap_err().contains("no code signature"));
        assert!(check_thin_macos(&signed_macho(false, false)).unwrap_err().contains("no minimum macOS"));
    }

    #[test]
    fn two_thin_files_join_into_one_universal_file() {
        let arm = signed_macho(false, true);
        let mut intel = vec![0u8; 5000];
        intel[..4].copy_from_slice(&0xfeed_facfu32.to_le_bytes());
        intel[4..8].copy_from_slice(&CPU_X86_64.to_le_bytes());
        intel[8..12].copy_from_slice(&3u32.to_le_bytes());
        intel[16..20].copy_from_slice(&1u32.to_le_bytes());
        intel[32..36].copy_from_slice(&0x24u32.to_le_bytes());
        intel[36..40].copy_from_slice(&16u32.to_le_bytes());
        intel[40..44].copy_from_slice(&0x000a_0c00u32.to_le_bytes());
        let joined = crate::universal::join(&[&intel, &arm]).unwrap();
        let slices = macho_slices(&joined).unwrap();
        assert_eq!(slices.len(), 2);
        assert_eq!((slices[0].0, slices[0].1), (CPU_X86_64, &intel[..]));
        assert_eq!((slices[1].0, slices[1].1), (CPU_ARM64, &arm[..]));
        let halves = check_universal_macos(&joined).unwrap();
        assert_eq!((halves.arm64_oldest.as_str(), halves.intel_oldest.as_str()), ("11.0", "10.12"));
        assert!(check_universal_macos(&crate::universal::join(&[&intel]).unwrap()).is_err(), "no arm64 half");
        assert!(crate::universal::join(&[b"not a mach-o file"]).is_err());
    }
}
