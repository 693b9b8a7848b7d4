#ifndef TACTUS_CBEATNETWEIGHTS_H
#define TACTUS_CBEATNETWEIGHTS_H
#include <stddef.h>

/// The trained weights of BeatNet's model 1 (Heydari, Cwitkowitz & Duan, ISMIR 2021; CC BY 4.0),
/// embedded in the binary: little-endian float32 values in the order README.md lists.
const float *tactus_beatnet_weights(void);
/// The number of float32 values `tactus_beatnet_weights` points to.
size_t tactus_beatnet_weight_count(void);

#endif
