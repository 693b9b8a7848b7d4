#ifndef TACTUS_COPENBLAS_SHIM_H
#define TACTUS_COPENBLAS_SHIM_H
#include <cblas.h>
#endif
