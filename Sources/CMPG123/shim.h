#ifndef TACTUS_CMPG123_SHIM_H
#define TACTUS_CMPG123_SHIM_H
/* Large-file off_t so mpg123's 64-bit API is selected consistently. */
#include <sys/types.h>
#include <mpg123.h>
#endif
