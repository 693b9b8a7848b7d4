#ifndef TACTUS_CSOXR_SHIM_H
#define TACTUS_CSOXR_SHIM_H
#include <soxr.h>
#endif
