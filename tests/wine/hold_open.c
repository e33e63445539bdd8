/* Test-only: holds a file open without sharing it, as an editor or a backup
 * tool can, until its stdin ends. Prints "held" once the file is held, or
 * the Windows error code when it could not open it. */
#include <stdio.h>
#include <windows.h>

int wmain(int argc, wchar_t **argv)
{
    if (argc != 2) {
        fputs("usage: hold_open FILE\n", stderr);
        return 2;
    }
    HANDLE file = CreateFileW(argv[1], GENERIC_READ, 0, NULL, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
    if (file == INVALID_HANDLE_VALUE) {
        printf("error %lu\n", GetLastError());
        return 1;
    }
    puts("held");
    fflush(stdout);
    char sink[64];
    while (fread(sink, 1, sizeof sink, stdin) > 0) {
    }
    CloseHandle(file);
    return 0;
}
