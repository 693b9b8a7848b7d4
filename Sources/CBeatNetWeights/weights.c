#include "CBeatNetWeights.h"

extern const unsigned char tactus_beatnet_weight_data[];
extern const unsigned char tactus_beatnet_weight_data_end[];

const float *tactus_beatnet_weights(void) {
    return (const float *)tactus_beatnet_weight_data;
}

size_t tactus_beatnet_weight_count(void) {
    return (size_t)(tactus_beatnet_weight_data_end - tactus_beatnet_weight_data) / sizeof(float);
}
