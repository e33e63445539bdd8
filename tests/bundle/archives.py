"""Checks what `cargo xtask bundle` wrote into target/bundle/, as a person
downloading it would: every file in SHA256SUMS matches its sum, nothing there
is left out of SHA256SUMS, and each bare-binary archive unpacks to one folder
holding an executable `resmon-mcp` (or `resmon-mcp.exe`), the README and the
licences.

Usage: python3 tests/bundle/archives.py target/bundle
Prints PASS/FAIL lines; exit 1 on any FAIL. Standard library only.
"""

import hashlib
import os
import stat
import sys
import tarfile
import zipfile

EXPECTED = {"README.md", "LICENSE", "LICENSE-MIT", "LICENSE-APACHE"}
failed = 0


def check(ok: bool, what: str, why: str = "") -> None:
    global failed
    if ok:
        print(f"PASS archives {what}")
    else:
        failed += 1
        print(f"FAIL archives {what}: {why}")


def members_tar(path: str) -> dict[str, int]:
    with tarfile.open(path) as archive:
        return {m.name: m.mode for m in archive.getmembers() if m.isfile()}


def members_zip(path: str) -> dict[str, int]:
    with zipfile.ZipFile(path) as archive:
        check(archive.testzip() is None, f"{os.path.basename(path)} has intact entries")
        return {i.filename: (i.external_attr >> 16) & 0o7777 for i in archive.infolist()}


def main() -> int:
    out = sys.argv[1]
    sums_path = os.path.join(out, "SHA256SUMS")
    if not os.path.isfile(sums_path):
        check(False, "SHA256SUMS exists", f"no {sums_path}")
        return 1
    listed = {}
    for line in open(sums_path):
        digest, _, name = line.rstrip("\n").partition("  ")
        listed[name] = digest
    present = sorted(set(os.listdir(out)) - {"SHA256SUMS"})
    check(sorted(listed) == present, "SHA256SUMS lists every file written", f"lists {sorted(listed)}, found {present}")
    for name, digest in listed.items():
        path = os.path.join(out, name)
        actual = hashlib.sha256(open(path, "rb").read()).hexdigest() if os.path.isfile(path) else None
        check(actual == digest, f"{name} matches its SHA-256", f"{actual} != {digest}")
    archives = [n for n in present if n.endswith(".tar.gz") or (n.endswith(".zip"))]
    check(bool(archives), "at least one bare-binary archive", f"found {present}")
    for name in archives:
        path = os.path.join(out, name)
        folder = name.removesuffix(".tar.gz").removesuffix(".zip")
        members = members_tar(path) if name.endswith(".tar.gz") else members_zip(path)
        binary = "resmon-mcp.exe" if name.endswith(".zip") else "resmon-mcp"
        inside = {member.split("/", 1)[1] for member in members if member.startswith(folder + "/")}
        check(len(inside) == len(members), f"{name} holds one folder, {folder}/", sorted(members))
        check(inside == EXPECTED | {binary}, f"{name} holds the binary, README and licences", sorted(inside))
        mode = members.get(f"{folder}/{binary}", 0)
        check(bool(mode & stat.S_IXUSR), f"{name}: {binary} is executable", oct(mode))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
