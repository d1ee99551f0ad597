/* Test-only, never shipped: Wine 8.0 (Debian 12) has no bcryptprimitives.dll,
 * whose ProcessPrng Rust's std calls for random bytes on Windows 10 and
 * newer (Wine has it from 8.13). Beside a test program, this DLL answers
 * with advapi32's RtlGenRandom (SystemFunction036), which Wine has. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG part = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, part)) return FALSE;
        data += part;
        length -= part;
    }
    return TRUE;
}
