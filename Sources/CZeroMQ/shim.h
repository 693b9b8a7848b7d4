#ifndef TACTUS_CZEROMQ_SHIM_H
#define TACTUS_CZEROMQ_SHIM_H
#include <zmq.h>
#endif
