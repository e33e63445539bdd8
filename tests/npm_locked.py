"""Installs an npm project from its committed lock, immune to registry drift.

Usage: python3 tests/npm_locked.py <source dir with package.json and
package-lock.json> <install dir under target/>

Why not a byte comparison of the lock: the registry changes between runs.
An optional package for another platform (a win32-only native helper, say)
can start or stop being served overnight, and `npm install` then adds or
drops its entry. That changes nothing on this machine, where such a package
is never installed, yet a byte-equal check fails on it. So the rule is:

- install with `npm install` from the committed lock (it keeps every locked
  version and only adds what the lock could not hold);
- compare the resulting lock with the committed one, entry by entry,
  leaving out optional entries whose `os`, `cpu` or `libc` excludes this
  machine (npm never installs those here, e.g. a musl build on glibc);
- anything else that differs (a version, an integrity hash, a package that
  appeared or vanished for this platform) fails loudly, naming the entry.

The install is reused while the committed lock is unchanged. Exit status 0
only when the locked tree for this platform is installed exactly.
Standard library only.
"""

import json
import os
import platform
import shutil
import subprocess
import sys

MARKER = ".resmon-lock"


def node_platform() -> tuple[str, str]:
    """This machine as npm names it in `os` and `cpu` fields."""
    system = {"Linux": "linux", "Darwin": "darwin", "Windows": "win32"}.get(platform.system(), platform.system().lower())
    machine = platform.machine().lower()
    cpu = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine, machine)
    return system, cpu


def node_libc() -> str | None:
    """This machine's C library as npm names it in `libc` (Linux only)."""
    if platform.system() != "Linux":
        return None
    return "glibc" if platform.libc_ver()[0] == "glibc" else "musl"


def excludes(values: list[str] | str | None, ours: str) -> bool:
    """npm's rule: a list names allowed values, and `!x` names excluded ones.
    A lock may hold a single value as a plain string."""
    if not values:
        return False
    if isinstance(values, str):
        values = [values]
    allowed = [v for v in values if not v.startswith("!")]
    denied = [v[1:] for v in values if v.startswith("!")]
    if ours in denied:
        return True
    return bool(allowed) and ours not in allowed


def for_this_platform(lock: dict) -> dict:
    system, cpu = node_platform()
    libc = node_libc()
    kept = {}
    for path, entry in lock.get("packages", {}).items():
        elsewhere = excludes(entry.get("os"), system) or excludes(entry.get("cpu"), cpu)
        # npm reads `libc` only on Linux; elsewhere it never excludes.
        elsewhere = elsewhere or (libc is not None and excludes(entry.get("libc"), libc))
        if entry.get("optional") and elsewhere:
            continue
        kept[path] = {key: entry.get(key) for key in ("version", "resolved", "integrity", "link") if key in entry}
    return kept


def differences(committed: dict, installed: dict) -> list[str]:
    out = []
    for path in sorted(set(committed) | set(installed)):
        want, got = committed.get(path), installed.get(path)
        if want is None:
            out.append(f"{path or '(root)'}: not in the committed lock, installed as {got}")
        elif got is None:
            out.append(f"{path or '(root)'}: locked as {want}, not installed")
        elif want != got:
            out.append(f"{path or '(root)'}: locked as {want}, installed as {got}")
    return out


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 2
    source, target = sys.argv[1], sys.argv[2]
    lock_path = os.path.join(source, "package-lock.json")
    with open(lock_path, "rb") as handle:
        committed_bytes = handle.read()
    marker = os.path.join(target, "node_modules", MARKER)
    if os.path.exists(marker) and open(marker, "rb").read() == committed_bytes:
        print(f"npm: {source} already installed from this lock")
        return 0
    os.makedirs(target, exist_ok=True)
    shutil.rmtree(os.path.join(target, "node_modules"), ignore_errors=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copy(os.path.join(source, name), os.path.join(target, name))
    # --ignore-scripts: no package here needs an install script, and none
    # should run code at install time on a CI machine.
    command = ["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"]
    run = subprocess.run(command, cwd=target, capture_output=True, text=True)
    if run.returncode != 0:
        print(f"FAIL setup npm install in {target} exited {run.returncode}:")
        print((run.stdout + run.stderr)[-4000:])
        return 1
    with open(os.path.join(target, "package-lock.json")) as handle:
        installed = for_this_platform(json.load(handle))
    problems = differences(for_this_platform(json.loads(committed_bytes)), installed)
    if problems:
        print(f"FAIL setup npm install did not reproduce {lock_path} for this platform:")
        for problem in problems[:40]:
            print(f"  {problem}")
        return 1
    with open(marker, "wb") as handle:
        handle.write(committed_bytes)
    print(f"npm: {len(installed)} locked entries installed for {'/'.join(node_platform())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
