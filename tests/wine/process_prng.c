/* Test-only stand-in for Windows 10's bcryptprimitives.dll, built by
 * tests/wine/run.sh into that stage's own Wine prefix and never shipped.
 *
 * Rust's standard library asks ProcessPrng for random bytes (hash seeds,
 * among others). Wine has it only from 8.13; Debian bookworm's Wine is 8.0,
 * where the .exe cannot start without it. RtlGenRandom (SystemFunction036 in
 * advapi32) has been in Wine for a long time and gives the same thing. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
