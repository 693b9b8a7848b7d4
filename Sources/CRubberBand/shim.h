#ifndef TACTUS_CRUBBERBAND_SHIM_H
#define TACTUS_CRUBBERBAND_SHIM_H
#include <rubberband/rubberband-c.h>
#endif
