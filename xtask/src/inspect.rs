//! Reads a built binary's headers, so that a bundle only claims a platform
//! whose binary really is what that platform runs: an x86_64 ELF with no
//! dynamic loader for Linux, an x86_64 PE for Windows that needs no DLL
//! beyond Windows' own, and for macOS a
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

/// The DLLs every Windows the binary runs on carries itself, compared
/// without regard to case. The C runtime of MinGW-w64 builds (msvcrt.dll)
/// is one of them; the Visual C++ runtime (VCRUNTIME140.dll, the
/// api-ms-win-crt-* set and ucrtbase.dll where an old Windows lacks the
/// Universal CRT) is not, and a PC that never installed the Visual C++
/// Redistributable refuses to start a binary that needs it.
const SYSTEM_DLLS: [&str; 12] = [
    "kernel32.dll",
    "ntdll.dll",
    "ws2_32.dll",
    "bcrypt.dll",
    "bcryptprimitives.dll",
    "advapi32.dll",
    "userenv.dll",
    "msvcrt.dll",
    "secur32.dll",
    "crypt32.dll",
    "shell32.dll",
    "ole32.dll",
];

/// Whether Windows itself provides `dll`: one of [`SYSTEM_DLLS`], or an
/// API set (`api-ms-win-core-*` and the like) other than the C runtime's.
fn is_system_dll(dll: &str) -> bool {
    let dll = dll.to_ascii_lowercase();
    SYSTEM_DLLS.contains(&dll.as_str())
        || (dll.starts_with("api-ms-win-") && !dll.starts_with("api-ms-win-crt-"))
}

/// An x86_64 Windows PE executable that needs no DLL beyond Windows' own,
/// so that it starts on a PC where nothing else was ever installed.
pub fn check_windows_x86_64(data: &[u8]) -> Result<(), String> {
    let foreign: Vec<String> =
        windows_x86_64_imports(data)?.into_iter().filter(|dll| !is_system_dll(dll)).collect();
    if foreign.is_empty() {
        return Ok(());
    }
    let (these, them) = if foreign.len() == 1 {
        ("which Windows does not ship", "it")
    } else {
        ("none of which Windows ships", "them")
    };
    Err(format!(
        "it needs {}, {these}, so a PC without {them} would refuse to start it (for MSVC, \
         link the C runtime statically: -C target-feature=+crt-static, as .cargo/config.toml sets)",
        foreign.join(", ")
    ))
}

/// The DLLs an x86_64 PE executable imports, at load time or delayed.
pub fn windows_x86_64_imports(data: &[u8]) -> Result<Vec<String>, String> {
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
    let truncated = || "truncated PE headers".to_string();
    let sections = usize::from(u16_le(data, pe + 6).ok_or_else(truncated)?);
    let optional = pe + 24;
    let optional_size = usize::from(u16_le(data, pe + 20).ok_or_else(truncated)?);
    if u16_le(data, optional) != Some(0x20b) {
        return Err("not a PE32+ file".into());
    }
    let directories = u32_le(data, optional + 108).ok_or_else(truncated)? as usize;
    // Each section: (virtual address, virtual size, file offset, file size).
    let table: Vec<(usize, usize, usize, usize)> = (0..sections)
        .map(|index| {
            let at = optional + optional_size + index * 40;
            let field = |offset| u32_le(data, at + offset).map(|value| value as usize);
            Some((field(12)?, field(8)?, field(20)?, field(16)?))
        })
        .collect::<Option<_>>()
        .ok_or_else(truncated)?;
    let offset_of = |rva: usize| {
        table.iter().find_map(|&(address, size, offset, raw)| {
            (rva >= address && rva < address + size.max(raw)).then(|| rva - address + offset)
        })
    };
    let name_at = |rva: usize| -> Result<String, String> {
        let start = offset_of(rva).ok_or("an imported DLL's name lies outside every section")?;
        let bytes = data.get(start..).ok_or_else(truncated)?;
        let end = bytes.iter().position(|&byte| byte == 0).ok_or("an imported DLL's name never ends")?;
        Ok(String::from_utf8_lossy(&bytes[..end]).into_owned())
    };
    let mut dlls = Vec::new();
    // The import table (directory 1: 20-byte entries, the name's address
    // at 12) and the delay-load table (directory 13: 32-byte entries, the
    // name's address at 4); each ends with an entry of zeros.
    for (directory, entry_size, name_field) in [(1, 20, 12), (13, 32, 4)] {
        if directory >= directories {
            continue;
        }
        let rva = u32_le(data, optional + 112 + directory * 8).ok_or_else(truncated)? as usize;
        if rva == 0 {
            continue;
        }
        let mut at = offset_of(rva).ok_or("the import table lies outside every section")?;
        loop {
            let entry = data.get(at..at + entry_size).ok_or("the import table runs past the end")?;
            if entry.iter().all(|&byte| byte == 0) {
                break;
            }
            let name = u32_le(entry, name_field).ok_or_else(truncated)? as usize;
            dlls.push(name_at(name)?);
            at += entry_size;
        }
    }
    Ok(dlls)
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

/// A minimal x86_64 ELF header with one program header of the given type
/// (1 is a loadable segment, 3 an interpreter), for the unit tests of what
/// reads a binary's format.
#[cfg(test)]
pub(crate) fn test_elf(program_type: u32) -> Vec<u8> {
    let mut data = vec![0u8; 64 + 56];
    data[..6].copy_from_slice(b"\x7fELF\x02\x01");
    data[0x12..0x14].copy_from_slice(&62u16.to_le_bytes());
    data[0x20..0x28].copy_from_slice(&64u64.to_le_bytes());
    data[0x36..0x38].copy_from_slice(&56u16.to_le_bytes());
    data[0x38..0x3a].copy_from_slice(&1u16.to_le_bytes());
    data[64..68].copy_from_slice(&program_type.to_le_bytes());
    data
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elf(program_type: u32) -> Vec<u8> {
        test_elf(program_type)
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

    /// A minimal PE32+ file of one section holding an import table and a
    /// delay-load table, each naming the given DLLs.
    fn pe(imports: &[&str], delayed: &[&str]) -> Vec<u8> {
        let mut data = vec![0u8; 0x400];
        data[..2].copy_from_slice(b"MZ");
        data[0x3c..0x40].copy_from_slice(&0x80u32.to_le_bytes());
        data[0x80..0x84].copy_from_slice(b"PE\0\0");
        data[0x84..0x86].copy_from_slice(&0x8664u16.to_le_bytes());
        data[0x86..0x88].copy_from_slice(&1u16.to_le_bytes());
        data[0x94..0x96].copy_from_slice(&240u16.to_le_bytes());
        let optional = 0x98;
        data[optional..optional + 2].copy_from_slice(&0x20bu16.to_le_bytes());
        data[optional + 108..optional + 112].copy_from_slice(&16u32.to_le_bytes());
        // The one section: virtual address 0x1000, at 0x200 in the file.
        let section = optional + 240;
        data[section..section + 6].copy_from_slice(b".idata");
        data[section + 8..section + 12].copy_from_slice(&0x200u32.to_le_bytes());
        data[section + 12..section + 16].copy_from_slice(&0x1000u32.to_le_bytes());
        data[section + 16..section + 20].copy_from_slice(&0x200u32.to_le_bytes());
        data[section + 20..section + 24].copy_from_slice(&0x200u32.to_le_bytes());
        let rva = |file_offset: usize| (file_offset - 0x200 + 0x1000) as u32;
        // Names from 0x300 on, the two tables at 0x200 and 0x280.
        let mut names = 0x300;
        for (directory, table, entry_size, name_field, dlls) in
            [(1, 0x200, 20, 12, imports), (13, 0x280, 32, 4, delayed)]
        {
            if dlls.is_empty() {
                continue;
            }
            let slot = optional + 112 + directory * 8;
            data[slot..slot + 4].copy_from_slice(&rva(table).to_le_bytes());
            for (index, dll) in dlls.iter().enumerate() {
                let at = table + index * entry_size + name_field;
                data[at..at + 4].copy_from_slice(&rva(names).to_le_bytes());
                data[names..names + dll.len()].copy_from_slice(dll.as_bytes());
                names += dll.len() + 1;
            }
        }
        data
    }

    #[test]
    fn a_windows_binary_may_need_only_windows_own_dlls() {
        let mingw = pe(&["KERNEL32.dll", "msvcrt.dll", "ntdll.dll", "WS2_32.dll"], &["bcryptprimitives.dll"]);
        assert_eq!(
            windows_x86_64_imports(&mingw).unwrap(),
            ["KERNEL32.dll", "msvcrt.dll", "ntdll.dll", "WS2_32.dll", "bcryptprimitives.dll"]
        );
        assert_eq!(check_windows_x86_64(&mingw), Ok(()));
        let api_set = pe(&["KERNEL32.dll", "api-ms-win-core-synch-l1-2-0.dll"], &[]);
        assert_eq!(check_windows_x86_64(&api_set), Ok(()));
        // The Visual C++ runtime, linked dynamically: at load time or delayed.
        let msvc = pe(&["KERNEL32.dll", "VCRUNTIME140.dll", "api-ms-win-crt-runtime-l1-1-0.dll"], &[]);
        let refused = check_windows_x86_64(&msvc).unwrap_err();
        assert!(refused.contains("VCRUNTIME140.dll, api-ms-win-crt-runtime-l1-1-0.dll"), "{refused}");
        assert!(refused.contains("+crt-static"), "{refused}");
        let delayed = check_windows_x86_64(&pe(&["KERNEL32.dll"], &["libgcc_s_seh-1.dll"])).unwrap_err();
        assert!(delayed.contains("libgcc_s_seh-1.dll"), "{delayed}");
        let mut arm = mingw.clone();
        arm[0x84..0x86].copy_from_slice(&0xaa64u16.to_le_bytes());
        assert!(check_windows_x86_64(&arm).unwrap_err().contains("not an x86_64"));
        assert!(check_windows_x86_64(&mingw[..0x210]).is_err(), "truncated");
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
