"""Checks the registry packages `cargo xtask bundle` wrote into target/bundle/
against each other and against their sources, as a registry and an installer
would read them:

- bundle/release.json and Cargo.toml agree (repository, version), and every
  package names that version, that repository and that registry name;
- the crate holds what builds and what a reader needs, and no tests;
- each wheel is a valid wheel (METADATA, WHEEL whose tags match its file name,
  RECORD listing every other file with its right SHA-256 and size), its one
  script is executable, and it is byte for byte the binary of the archive for
  the same operating system; its README carries `mcp-name: <registry name>`;
- no package's README (the wheels' long description, each npm package's
  README.md) links to a file by a relative path: a registry shows the README
  alone, where such a link leads nowhere;
- the npm launcher names exactly the platform packages written, as exact
  versions, carries `mcpName` and the checked-in script; no package has an
  install script; each platform package says where it applies (`os`, `cpu`)
  and holds its archive's binary, executable;
- server.json names the npm and PyPI packages at this version and the MCP
  Bundle's download address, whose file here has the SHA-256 it gives.

Usage: python3 tests/bundle/packages.py <repository root> <target/bundle>
Prints PASS/FAIL lines; exit 1 on any FAIL. Standard library only, and the
test kit (tests/lib on PYTHONPATH, as run.sh sets it).
"""

import base64
import hashlib
import io
import json
import os
import re
import sys
import tarfile
import tomllib
import zipfile

from archives import links
from kit.tally import Tally

VARIABLES = ["RESMON_PORT_FILE", "RESMON_PORT", "RESMON_STATE_DIR", "RESMON_DB_PATH", "RESMON_MCP_READ_ONLY",
             "RESMON_MCP_TIMEOUT_MS"]
# `check(ok, what, why)` prints a PASS or FAIL line; run.sh counts them.
TALLY = Tally("packages")
check = TALLY.check


def file_links(text: str) -> list[str]:
    """The links of a Markdown text that name a file by a relative path."""
    return [t for t in links(text) if not (t.startswith("#") or "://" in t or t.startswith("mailto:"))]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def python_version(version: str) -> str:
    release, _, pre = version.partition("-")
    if not pre:
        return version
    label, _, number = pre.partition(".")
    return release + {"alpha": "a", "a": "a", "beta": "b", "b": "b", "rc": "rc"}[label] + (number or "0")


def os_of(name: str) -> str | None:
    """The operating system a file or tag is for, by its name."""
    for needle, system in (("linux", "linux"), ("darwin", "darwin"), ("macosx", "darwin"), ("apple", "darwin"),
                           ("windows", "win32"), ("win32", "win32"), ("win_", "win32")):
        if needle in name:
            return system
    return None


def archive_binaries(out: str, names: list[str]) -> dict[str, str]:
    """The SHA-256 of the binary in each bare-binary archive, by operating system."""
    found = {}
    for name in names:
        path = os.path.join(out, name)
        if name.endswith(".tar.gz"):
            with tarfile.open(path) as archive:
                for member in archive.getmembers():
                    if member.isfile() and member.name.endswith("/resmon-mcp"):
                        found[os_of(name)] = sha256(archive.extractfile(member).read())
        elif name.endswith(".zip"):
            with zipfile.ZipFile(path) as archive:
                for info in archive.infolist():
                    if info.filename.endswith("/resmon-mcp.exe"):
                        found[os_of(name)] = sha256(archive.read(info))
    return found


def check_crate(out: str, version: str, repository: str) -> None:
    name = f"resmon-mcp-{version}.crate"
    path = os.path.join(out, name)
    if not check(os.path.isfile(path), f"{name} was written", "no crate in target/bundle"):
        return
    with tarfile.open(path) as archive:
        files = {m.name.split("/", 1)[1] for m in archive.getmembers() if m.isfile()}
        manifest = tomllib.loads(archive.extractfile(f"resmon-mcp-{version}/Cargo.toml").read().decode())
    package = manifest["package"]
    check(package["version"] == version and package["repository"] == repository,
          f"{name}: its Cargo.toml names version {version} and the repository of bundle/release.json",
          f"{package.get('version')}, {package.get('repository')}")
    wanted = {"Cargo.toml", "Cargo.lock", "README.md", "LICENSE", "LICENSE-MIT", "LICENSE-APACHE", "src/main.rs",
              "src/lib.rs", "docs/setup.md"}
    extra = sorted(f for f in files if f.split("/")[0] in ("tests", "examples", "fixtures", "xtask", "fuzz",
                                                         "bundle", ".ci", ".github"))
    check(wanted <= files and not extra, f"{name} holds the sources, the README, the licences and docs/, no tests",
          f"missing {sorted(wanted - files)}, unwanted {extra}")


def check_wheel(out: str, name: str, version: str, repository: str, registry_name: str,
                archives: dict[str, str]) -> None:
    dist = f"resmon_mcp-{python_version(version)}"
    match = re.fullmatch(re.escape(dist) + r"-py3-none-(.+)\.whl", name)
    if not check(match is not None, f"{name} is named {dist}-py3-none-<platform>.whl", name):
        return
    tags = match.group(1).split(".")
    with zipfile.ZipFile(os.path.join(out, name)) as wheel:
        infos = {info.filename: info for info in wheel.infolist()}
        read = lambda path: wheel.read(path) if path in infos else b""  # noqa: E731
        metadata = read(f"{dist}.dist-info/METADATA").decode()
        headers, _, body = metadata.partition("\n\n")
        fields = [line.split(": ", 1) for line in headers.splitlines() if ": " in line]
        got = {key: value for key, value in fields}
        check(got.get("Name") == "resmon-mcp" and got.get("Version") == python_version(version)
              and f"Repository, {repository}" in [v for k, v in fields if k == "Project-URL"],
              f"{name}: METADATA names resmon-mcp {python_version(version)} and the repository", headers)
        check(f"mcp-name: {registry_name}" in body, f"{name}: its README carries `mcp-name: {registry_name}`",
              "not found in the long description")
        check(not file_links(body), f"{name}: its README links to no file by a relative path", str(file_links(body)))
        wheel_tags = [line.split(": ", 1)[1] for line in read(f"{dist}.dist-info/WHEEL").decode().splitlines()
                      if line.startswith("Tag: ")]
        check(wheel_tags == [f"py3-none-{tag}" for tag in tags] and
              "Root-Is-Purelib: false" in read(f"{dist}.dist-info/WHEEL").decode(),
              f"{name}: WHEEL lists the tags of its file name and is not pure Python", str(wheel_tags))
        record = read(f"{dist}.dist-info/RECORD").decode().splitlines()
        problems = []
        listed = set()
        for line in record:
            path, digest, size = line.rsplit(",", 2)
            listed.add(path)
            if path.endswith("/RECORD"):
                continue
            data = read(path)
            expected = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            if digest != expected or size != str(len(data)):
                problems.append(path)
        unlisted = sorted(set(infos) - listed)
        check(record and not problems and not unlisted, f"{name}: RECORD lists every file with its hash and size",
              f"wrong {problems}, unlisted {unlisted}")
        scripts = [path for path in infos if path.startswith(f"{dist}.data/scripts/")]
        if not check(len(scripts) == 1, f"{name}: one script under {dist}.data/scripts/", str(scripts)):
            return
        mode = (infos[scripts[0]].external_attr >> 16) & 0o777
        check(mode == 0o755, f"{name}: the binary is executable (0755)", oct(mode))
        system = os_of(tags[0])
        check(sha256(read(scripts[0])) == archives.get(system),
              f"{name}: its binary has the SHA-256 of the {system} archive's binary",
              f"{sha256(read(scripts[0]))} vs {archives.get(system)}")


def tgz_files(path: str) -> dict[str, tuple[bytes, int]]:
    with tarfile.open(path) as archive:
        return {m.name: (archive.extractfile(m).read(), m.mode) for m in archive.getmembers() if m.isfile()}


def check_npm(root: str, out: str, names: list[str], version: str, repository: str, registry_name: str,
              archives: dict[str, str]) -> None:
    launcher_name = f"resmon-mcp-{version}.tgz"
    platform_names = [n for n in names if n.endswith(".tgz") and n != launcher_name]
    if not check(launcher_name in names, f"{launcher_name} (the npm launcher) was written", str(names)):
        return
    launcher = tgz_files(os.path.join(out, launcher_name))
    manifest = json.loads(launcher.get("package/package.json", (b"{}", 0))[0])
    check(manifest.get("name") == "resmon-mcp" and manifest.get("version") == version
          and manifest.get("mcpName") == registry_name
          and manifest.get("repository", {}).get("url") == f"git+{repository}.git",
          f"{launcher_name}: names resmon-mcp {version}, mcpName {registry_name} and the repository",
          json.dumps(manifest)[:600])
    script = launcher.get("package/" + manifest.get("bin", {}).get("resmon-mcp", "?"), (b"", 0))
    with open(os.path.join(root, "bundle", "npm", "resmon-mcp.js"), "rb") as f:
        check(script[0] == f.read() and script[1] & 0o111,
              f"{launcher_name}: its bin is bundle/npm/resmon-mcp.js, executable", "differs or not executable")
    readme = launcher.get("package/README.md", (b"", 0))[0].decode()
    check(f"mcp-name: {registry_name}" in readme, f"{launcher_name}: its README carries `mcp-name: {registry_name}`",
          "not found")
    check(not file_links(readme), f"{launcher_name}: its README links to no file by a relative path",
          str(file_links(readme)))
    optional = manifest.get("optionalDependencies") or {}
    served = manifest.get("resmonMcpBinaries") or {}
    platforms = {}
    for name in platform_names:
        files = tgz_files(os.path.join(out, name))
        platforms[name] = (json.loads(files.get("package/package.json", (b"{}", 0))[0]), files)
    check(optional == {m.get("name"): version for m, _ in platforms.values()},
          f"{launcher_name}: optionalDependencies name exactly the {len(platforms)} platform packages written, "
          f"at {version}", f"{optional} vs {sorted(platforms)}")
    check(set(served.values()) == set(optional) and all(re.fullmatch(r"[a-z0-9]+-[a-z0-9]+", k) for k in served),
          f"{launcher_name}: resmonMcpBinaries maps <platform>-<arch> to those packages", str(served))
    for package_manifest, _ in [(manifest, None)] + list(platforms.values()):
        check("scripts" not in package_manifest,
              f"{package_manifest.get('name')}: no install script (no `scripts` at all)",
              str(package_manifest.get("scripts")))
    for name, (package_manifest, files) in platforms.items():
        system = (package_manifest.get("os") or [None])[0]
        check(package_manifest.get("version") == version and package_manifest.get("cpu")
              and all(served.get(f"{system}-{cpu}") == package_manifest.get("name")
                      for cpu in package_manifest.get("cpu")),
              f"{name}: version {version}, os {package_manifest.get('os')} and cpu {package_manifest.get('cpu')}, "
              "as the launcher maps them", json.dumps(package_manifest)[:400])
        binary = [(data, mode) for path, (data, mode) in files.items()
                  if re.fullmatch(r"package/bin/resmon-mcp(\.exe)?", path)]
        check(len(binary) == 1 and binary[0][1] & 0o111 and sha256(binary[0][0]) == archives.get(system),
              f"{name}: holds the {system} archive's binary, executable",
              f"{[(sha256(d), oct(m)) for d, m in binary]} vs {archives.get(system)}")
        readme = files.get("package/README.md", (b"", 0))[0].decode()
        check(bool(readme) and not file_links(readme), f"{name}: its README links to no file by a relative path",
              str(file_links(readme)) if readme else "no README.md")


def check_server(out: str, names: list[str], version: str, repository: str, registry_name: str,
                 assets: str) -> None:
    path = os.path.join(out, "server.json")
    if not check(os.path.isfile(path), "server.json was written", "missing"):
        return
    with open(path) as f:
        server = json.load(f)
    check(server.get("name") == registry_name and server.get("version") == version
          and server.get("repository", {}).get("url") == repository,
          "server.json: the registry name, version and repository of bundle/release.json and Cargo.toml",
          json.dumps({k: server.get(k) for k in ("name", "version", "repository")}))
    packages = {p.get("registryType"): p for p in server.get("packages") or []}
    check(packages.get("npm", {}).get("identifier") == "resmon-mcp"
          and packages.get("npm", {}).get("version") == version
          and packages.get("pypi", {}).get("identifier") == "resmon-mcp"
          and packages.get("pypi", {}).get("version") == python_version(version),
          "server.json: the npm and PyPI packages at this version", json.dumps(packages)[:600])
    bundles = sorted(n for n in names if n.endswith(".mcpb"))
    offered = next((n for n in bundles if n.endswith("-universal.mcpb")), bundles[0] if bundles else None)
    mcpb = packages.get("mcpb", {})
    with open(os.path.join(out, offered), "rb") if offered else io.BytesIO() as f:
        digest = sha256(f.read())
    check(offered is not None and mcpb.get("identifier") == f"{assets.replace('{version}', version)}/{offered}"
          and mcpb.get("fileSha256") == digest,
          f"server.json: the MCP Bundle {offered} at its release address, with its SHA-256",
          json.dumps(mcpb)[:300])
    for kind, package in packages.items():
        names_seen = [v.get("name") for v in package.get("environmentVariables") or []]
        check(package.get("transport") == {"type": "stdio"} and names_seen == VARIABLES,
              f"server.json: the {kind} package runs over stdio and describes the six variables", str(names_seen))


def main() -> int:
    root, out = sys.argv[1], sys.argv[2]
    with open(os.path.join(root, "Cargo.toml"), "rb") as f:
        cargo = tomllib.load(f)["package"]
    with open(os.path.join(root, "bundle", "release.json")) as f:
        release = json.load(f)
    version, repository = cargo["version"], cargo["repository"]
    registry_name = release["registry_name"]
    check(release["repository"] == repository and registry_name.endswith("/" + cargo["name"]),
          "bundle/release.json names Cargo.toml's repository and the package's name",
          f"{release} vs {repository}")
    names = sorted(os.listdir(out))
    archives = archive_binaries(out, [n for n in names if n.endswith((".tar.gz", ".zip"))])
    check_crate(out, version, repository)
    wheels = [n for n in names if n.endswith(".whl")]
    check(bool(wheels), "at least one wheel was written", str(names))
    for name in wheels:
        check_wheel(out, name, version, repository, registry_name, archives)
    check_npm(root, out, names, version, repository, registry_name, archives)
    check_server(out, names, version, repository, registry_name, release["release_assets"])
    return 1 if TALLY.failed else 0


if __name__ == "__main__":
    sys.exit(main())
