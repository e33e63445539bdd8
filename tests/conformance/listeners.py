"""Prints the addresses a TCP port is listening on, from /proc/net/tcp{,6}.

Usage: python3 listeners.py PORT

One line: the distinct local addresses of the listening sockets on PORT,
comma-separated and sorted (`127.0.0.1`, or `0.0.0.0,::` for a socket bound
to every interface); empty when nothing listens yet. run.sh uses it to prove
the bridge listens on loopback alone. Linux only, standard library only.
"""

import ipaddress
import struct
import sys

LISTEN = "0A"


def address(hex_address: str) -> str:
    """The kernel prints an address as 32-bit words, each the value of the
    word as it lies in memory (network-order bytes read in host order), so
    writing each value back in host order gives the address's bytes."""
    words = [int(hex_address[i : i + 8], 16) for i in range(0, len(hex_address), 8)]
    packed = b"".join(struct.pack("=I", word) for word in words)
    return str(ipaddress.ip_address(packed))


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 2
    port = int(sys.argv[1])
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as handle:
                rows = handle.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            local, state = fields[1], fields[3]
            hex_address, hex_port = local.split(":")
            if state == LISTEN and int(hex_port, 16) == port:
                found.add(address(hex_address))
    print(",".join(sorted(found)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
