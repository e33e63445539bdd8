//! Joins a thin arm64 and a thin x86_64 Mach-O into one universal ("fat")
//! file, as `lipo -create` does, so that no Apple tool is needed to build
//! the macOS binary on Linux or Windows, and none beyond cargo on a Mac.

/// Each slice starts on a 16 KiB boundary: arm64's page size, and a
/// multiple of x86_64's.
const ALIGN_LOG2: u32 = 14;

/// A fat file holding `slices` in order; each must be a thin 64-bit Mach-O.
pub fn join(slices: &[&[u8]]) -> Result<Vec<u8>, String> {
    let align = 1usize << ALIGN_LOG2;
    let mut header = Vec::new();
    header.extend_from_slice(&0xcafe_babeu32.to_be_bytes());
    header.extend_from_slice(&u32::try_from(slices.len()).map_err(|_| "too many slices")?.to_be_bytes());
    let mut offset = (8 + 20 * slices.len()).next_multiple_of(align);
    let mut placed = Vec::new();
    for slice in slices {
        if slice.get(..4) != Some(&0xfeed_facfu32.to_le_bytes()) {
            return Err("a slice is not a thin 64-bit Mach-O file".into());
        }
        let cpu = u32::from_le_bytes(slice[4..8].try_into().map_err(|_| "truncated")?);
        let subtype = u32::from_le_bytes(slice[8..12].try_into().map_err(|_| "truncated")?);
        header.extend_from_slice(&cpu.to_be_bytes());
        // The capability bits of the subtype stay in the thin file only.
        header.extend_from_slice(&(subtype & 0x00ff_ffff).to_be_bytes());
        header.extend_from_slice(&u32::try_from(offset).map_err(|_| "over 4 GiB")?.to_be_bytes());
        header.extend_from_slice(&u32::try_from(slice.len()).map_err(|_| "over 4 GiB")?.to_be_bytes());
        header.extend_from_slice(&ALIGN_LOG2.to_be_bytes());
        placed.push(offset);
        offset = (offset + slice.len()).next_multiple_of(align);
    }
    let mut out = header;
    for (slice, at) in slices.iter().zip(placed) {
        out.resize(at, 0);
        out.extend_from_slice(slice);
    }
    Ok(out)
}
