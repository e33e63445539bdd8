//! A Python wheel around the release binary, so that `uvx resmon-mcp` and
//! `pip install resmon-mcp` install the same file the archive holds, as ruff
//! and uv ship theirs: no Python code, the binary under
//! `<name>-<version>.data/scripts/`, which installers copy into the
//! environment's `bin` (or `Scripts`) folder and mark executable.
//!
//! Written here rather than by maturin, which would build the binary again
//! (and with it the question of whether the wheel's binary is the archive's).

use sha2::{Digest, Sha256};

use crate::archive;
use crate::build::{Built, Platform};
use crate::inspect;
use crate::release::Release;
use crate::workspace::Package;

/// The distribution name in file names (PEP 427 writes `-` as `_`).
const DIST: &str = "resmon_mcp";

/// The wheel's platform tags for one binary, or why it gets no wheel.
///
/// - Linux: only the static binary, which runs on any distribution, tagged
///   for both glibc (manylinux, the oldest tag pip and uv still match) and
///   musl systems. A binary linked against this machine's glibc would need
///   the oldest glibc it runs on worked out; it gets no wheel instead.
/// - macOS: the oldest macOS each half names, as the binary itself says.
/// - Windows: x86_64, and arm64 too, where Windows 11 runs x86_64 programs
///   under emulation and a native arm64 Python looks only for `win_arm64`.
pub fn platform_tags(built: &Built, binary: &[u8]) -> Result<Vec<String>, String> {
    let underscored = |version: &str| {
        let mut parts = version.split('.');
        format!("{}_{}", parts.next().unwrap_or("0"), parts.next().unwrap_or("0"))
    };
    match built.platform {
        Platform::Linux => match inspect::linux_x86_64_needs_loader(binary)? {
            false => Ok(vec![
                "manylinux_2_17_x86_64".into(),
                "manylinux2014_x86_64".into(),
                "musllinux_1_1_x86_64".into(),
            ]),
            true => Err("the Linux binary is linked against this machine's glibc; a wheel that installs on \
                         any distribution needs the static one (rustup target add x86_64-unknown-linux-musl)"
                .into()),
        },
        Platform::Darwin if built.triple == "universal-apple-darwin" => {
            let halves = inspect::check_universal_macos(binary)?;
            Ok(vec![
                format!("macosx_{}_x86_64", underscored(&halves.intel_oldest)),
                format!("macosx_{}_arm64", underscored(&halves.arm64_oldest)),
                format!("macosx_{}_universal2", underscored(&halves.intel_oldest)),
            ])
        }
        Platform::Darwin => {
            let (cpu, oldest) = inspect::check_thin_macos(binary)?;
            Ok(vec![format!("macosx_{}_{cpu}", underscored(&oldest))])
        }
        Platform::Win32 => {
            inspect::check_windows_x86_64(binary)?;
            Ok(vec!["win_amd64".into(), "win_arm64".into()])
        }
    }
}

/// The version as Python writes it (PEP 440): a Cargo pre-release
/// `1.2.0-rc.1` is `1.2.0rc1`; forms Python has no spelling for are refused.
pub fn python_version(version: &str) -> Result<String, String> {
    if version.contains('+') {
        return Err(format!("the version {version:?} carries build metadata, which PyPI refuses"));
    }
    let Some((release, pre)) = version.split_once('-') else { return Ok(version.to_string()) };
    let (label, number) = pre.split_once('.').unwrap_or((pre, "0"));
    let short = match label {
        "alpha" | "a" => "a",
        "beta" | "b" => "b",
        "rc" => "rc",
        _ => {
            return Err(format!("the pre-release {pre:?} has no PEP 440 form (use alpha.N, beta.N or rc.N)"));
        }
    };
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("the pre-release {pre:?} has no PEP 440 form (use alpha.N, beta.N or rc.N)"));
    }
    Ok(format!("{release}{short}{number}"))
}

/// The wheel's file name and bytes.
pub fn wheel(
    package: &Package,
    release: &Release,
    built: &Built,
    binary: &[u8],
    readme: &str,
    licences: &[(String, Vec<u8>)],
    mtime: u64,
) -> Result<(String, Vec<u8>), String> {
    let tags = platform_tags(built, binary)?;
    let version = python_version(&package.version)?;
    let info = format!("{DIST}-{version}.dist-info");
    let mut entries = vec![archive::Entry::executable(
        format!("{DIST}-{version}.data/scripts/{}", built.platform.executable()),
        binary.to_vec(),
    )];
    let mut metadata = format!(
        "Metadata-Version: 2.4\nName: {}\nVersion: {version}\nSummary: {}\nLicense-Expression: {}\n",
        package.name, package.description, package.license
    );
    for (name, data) in licences {
        metadata.push_str(&format!("License-File: {name}\n"));
        entries.push(archive::Entry::file(format!("{info}/licenses/{name}"), data.clone()));
    }
    metadata.push_str(&format!(
        "Project-URL: Repository, {}\nDescription-Content-Type: text/markdown; charset=UTF-8\n\n{readme}",
        release.repository
    ));
    entries.push(archive::Entry::file(format!("{info}/METADATA"), metadata.into_bytes()));
    let mut wheel_file =
        "Wheel-Version: 1.0\nGenerator: resmon-mcp xtask\nRoot-Is-Purelib: false\n".to_string();
    for tag in &tags {
        wheel_file.push_str(&format!("Tag: py3-none-{tag}\n"));
    }
    entries.push(archive::Entry::file(format!("{info}/WHEEL"), wheel_file.into_bytes()));
    let mut record: String = entries
        .iter()
        .map(|entry| format!("{},sha256={},{}\n", entry.name, record_hash(&entry.data), entry.data.len()))
        .collect();
    record.push_str(&format!("{info}/RECORD,,\n"));
    entries.push(archive::Entry::file(format!("{info}/RECORD"), record.into_bytes()));
    let name = format!("{DIST}-{version}-py3-none-{}.whl", tags.join("."));
    let bytes = archive::zip(&entries, mtime).map_err(|error| format!("{error:#}"))?;
    Ok((name, bytes))
}

/// A RECORD line's hash: SHA-256 in URL-safe base64 without padding.
fn record_hash(data: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let digest = Sha256::digest(data);
    let mut out = String::new();
    for chunk in digest.chunks(3) {
        let bits =
            chunk.iter().enumerate().fold(0u32, |acc, (i, &byte)| acc | u32::from(byte) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(bits >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_hashes_are_unpadded_url_safe_base64() {
        // The SHA-256 of "" is e3b0c442…b855; Python's
        // base64.urlsafe_b64encode of it, with the padding removed:
        assert_eq!(record_hash(b""), "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
        assert_eq!(record_hash(b"abc"), "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0");
    }

    #[test]
    fn versions_take_their_python_spelling() {
        assert_eq!(python_version("0.1.0").unwrap(), "0.1.0");
        assert_eq!(python_version("1.2.0-rc.1").unwrap(), "1.2.0rc1");
        assert_eq!(python_version("1.2.0-alpha.3").unwrap(), "1.2.0a3");
        assert_eq!(python_version("1.2.0-beta").unwrap(), "1.2.0b0");
        assert!(python_version("1.2.0-preview.1").is_err());
        assert!(python_version("1.2.0+build.5").is_err());
    }

    fn static_elf() -> Vec<u8> {
        crate::inspect::test_elf(1)
    }

    fn linux() -> Built {
        Built {
            platform: Platform::Linux,
            label: "linux-x86_64".into(),
            triple: "x86_64-unknown-linux-musl".into(),
            file: "unused".into(),
            notes: String::new(),
        }
    }

    #[test]
    fn only_a_static_linux_binary_gets_a_wheel_for_glibc_and_musl() {
        let tags = platform_tags(&linux(), &static_elf()).unwrap();
        assert!(tags.iter().any(|tag| tag.starts_with("manylinux")));
        assert!(tags.iter().any(|tag| tag.starts_with("musllinux")));
        let mut dynamic = static_elf();
        dynamic[64] = 3; // PT_INTERP: names a loader
        assert!(platform_tags(&linux(), &dynamic).unwrap_err().contains("musl"));
    }

    #[test]
    fn a_wheel_records_every_file_with_its_hash_and_size() {
        let package = crate::workspace::Package {
            name: "resmon-mcp".into(),
            version: "1.2.3".into(),
            description: "d".into(),
            license: "MIT OR Apache-2.0".into(),
            repository: "https://github.com/ada/resmon-mcp".into(),
        };
        let workspace = crate::workspace::load().unwrap();
        let release = crate::release::load(&workspace.root, &workspace.package).unwrap();
        let licences = [("LICENSE-MIT".to_string(), b"mit".to_vec())];
        let (name, bytes) =
            wheel(&package, &release, &linux(), &static_elf(), "readme", &licences, 0).unwrap();
        assert_eq!(
            name,
            "resmon_mcp-1.2.3-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_1_x86_64.whl"
        );
        // Stored deflated: the test reads the names and the RECORD through
        // the zip's central directory, as an installer would.
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.contains("resmon_mcp-1.2.3.data/scripts/resmon-mcp"));
        assert!(text.contains("resmon_mcp-1.2.3.dist-info/RECORD"));
    }
}
