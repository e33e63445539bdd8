"""Checks what `cargo xtask bundle` wrote into target/bundle/, as a person
downloading it would: every file in SHA256SUMS matches its sum, nothing there
is left out of SHA256SUMS, and each bare-binary archive unpacks to one folder
holding an executable `resmon-mcp` (or `resmon-mcp.exe`), the README, the
user pages it links to and the licences.

And the links of every Markdown file an archive or a bundle carries, as a
person clicks them in the unpacked folder: a relative link names a file that
is in the archive (and a heading of it, when it names one); a link into the
repository names this release's tag and a file that is in the repository.

Usage: python3 tests/bundle/archives.py target/bundle [repository root]
(the root defaults to the repository this script is in).
Prints PASS/FAIL lines; exit 1 on any FAIL. Standard library only, and the
test kit (tests/lib on PYTHONPATH, as run.sh sets it).
"""

import hashlib
import json
import os
import re
import stat
import sys
import tarfile
import zipfile

from kit.tally import Tally

# What an archive holds beside the binary (xtask/src/docs.rs).
EXPECTED = {"README.md", "docs/setup.md", "docs/tools.md", "LICENSE", "LICENSE-MIT", "LICENSE-APACHE"}
# `check(ok, what, why)` prints a PASS or FAIL line; run.sh counts them.
TALLY = Tally("archives")
check = TALLY.check


def members_tar(path: str) -> dict[str, int]:
    with tarfile.open(path) as archive:
        return {m.name: m.mode for m in archive.getmembers() if m.isfile()}


def texts_tar(path: str) -> dict[str, str]:
    with tarfile.open(path) as archive:
        return {m.name: archive.extractfile(m).read().decode() for m in archive.getmembers()
                if m.isfile() and m.name.endswith(".md")}


def texts_zip(path: str) -> dict[str, str]:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name).decode() for name in archive.namelist() if name.endswith(".md")}


def outside_code(text: str) -> list[str]:
    """The lines of a Markdown text that are not inside a fenced code block."""
    lines, fence = [], None
    for line in text.splitlines():
        marker = next((m for m in ("```", "~~~") if line.lstrip().startswith(m)), None)
        if fence is None and marker:
            fence = marker
        elif fence is not None:
            if marker == fence:
                fence = None
        else:
            lines.append(line)
    return lines


def links(text: str) -> list[str]:
    """Every link target of a Markdown text outside code: inline links
    `[text](target "title")` and reference definitions `[label]: target`."""
    found = []
    for line in outside_code(text):
        definition = re.match(r"\s*\[[^\]]+\]:\s+(\S+)", line)
        if definition:
            found.append(definition.group(1))
            continue
        for match in re.finditer(r"\]\(([^)\s]*)", line):
            if line[:match.start()].count("`") % 2 == 0:
                found.append(match.group(1))
    return found


def anchors(text: str) -> set[str]:
    """The anchors GitHub gives a Markdown text's headings: lower case, only
    letters, digits, `_`, `-` and spaces kept, spaces made `-`, and a
    repeated one numbered (`-1`, `-2`)."""
    seen: dict[str, int] = {}
    out = set()
    for line in outside_code(text):
        heading = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        out.add(slug if count == 0 else f"{slug}-{count}")
    return out


def check_links(label: str, texts: dict[str, str], files: set[str], tree: str, root: str) -> None:
    """`texts`: the Markdown files of one archive by their path inside it
    (below its one folder); `files`: every file it holds, the same way."""
    problems, relative, into_repository = [], 0, 0
    for page, text in sorted(texts.items()):
        base = os.path.dirname(page)
        for target in links(text):
            path, _, anchor = target.partition("#")
            if target.startswith(tree + "/"):
                into_repository += 1
                named = path[len(tree) + 1:]
                if not os.path.exists(os.path.join(root, named)):
                    problems.append(f"{page}: {target} names {named}, which is not in the repository")
                elif anchor and named.endswith(".md"):
                    with open(os.path.join(root, named)) as f:
                        if anchor not in anchors(f.read()):
                            problems.append(f"{page}: {target}: {named} has no heading #{anchor}")
                continue
            if "://" in target or target.startswith("mailto:"):
                if "github.com" in target and "/blob/" in target:
                    problems.append(f"{page}: {target} points into a repository, but not at {tree}")
                continue
            relative += 1
            resolved = os.path.normpath(os.path.join(base, path)) if path else page
            if resolved.startswith("..") or resolved not in files:
                problems.append(f"{page}: {target} names {resolved}, which is not in the archive")
            elif anchor and resolved in texts and anchor not in anchors(texts[resolved]):
                problems.append(f"{page}: {target}: {resolved} has no heading #{anchor}")
    check(not problems and relative > 0,
          f"{label}: every relative link of its {len(texts)} Markdown files resolves inside it "
          f"({relative} links), and every one into the repository names a file at the release tag "
          f"({into_repository} links)", "; ".join(problems) or "no relative link was found")


def members_zip(path: str) -> dict[str, int]:
    with zipfile.ZipFile(path) as archive:
        check(archive.testzip() is None, f"{os.path.basename(path)} has intact entries")
        return {i.filename: (i.external_attr >> 16) & 0o7777 for i in archive.infolist()}


def main() -> int:
    out = sys.argv[1]
    root = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    with open(os.path.join(root, "bundle", "release.json")) as f:
        repository = json.load(f)["repository"].rstrip("/")
    version = re.search(r'^version = "(.*)"$', open(os.path.join(root, "Cargo.toml")).read(), re.M).group(1)
    tree = f"{repository}/blob/v{version}"
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
        check(inside == EXPECTED | {binary}, f"{name} holds the binary, the README, the user pages and the licences",
              sorted(inside))
        mode = members.get(f"{folder}/{binary}", 0)
        check(bool(mode & stat.S_IXUSR), f"{name}: {binary} is executable", oct(mode))
        texts = texts_tar(path) if name.endswith(".tar.gz") else texts_zip(path)
        texts = {member.split("/", 1)[1]: text for member, text in texts.items() if member.startswith(folder + "/")}
        check_links(name, texts, inside, tree, root)
    for name in (n for n in present if n.endswith(".mcpb")):
        path = os.path.join(out, name)
        with zipfile.ZipFile(path) as bundle:
            files = set(bundle.namelist())
        check(EXPECTED <= files, f"{name} holds the README, the user pages and the licences", sorted(files))
        check_links(name, texts_zip(path), files, tree, root)
    return 1 if TALLY.failed else 0


if __name__ == "__main__":
    sys.exit(main())
