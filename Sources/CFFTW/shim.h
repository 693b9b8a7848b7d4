#ifndef TACTUS_CFFTW_SHIM_H
#define TACTUS_CFFTW_SHIM_H
#include <fftw3.h>
#endif
