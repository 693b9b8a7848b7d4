// libFuzzer's driver, from compiler-rt (linked by -sanitize=fuzzer): runs the fuzzing loop
// with the command-line options in argv, calling `callback` with each input. The fuzz targets
// call it from their own entry point, because SwiftPM links an executable's `main` to the
// module's entry function and libFuzzer's own `main` is then never used.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
