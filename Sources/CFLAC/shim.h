#ifndef TACTUS_CFLAC_SHIM_H
#define TACTUS_CFLAC_SHIM_H
#include <FLAC/stream_decoder.h>
#endif
