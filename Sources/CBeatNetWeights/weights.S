// Embeds beatnet-model-1.f32 (see README.md) in the binary, so nothing is read or fetched at run time.
#if defined(__APPLE__)
#define SYMBOL(name) _##name
    .const
#else
#define SYMBOL(name) name
    .section .rodata
#endif
    .balign 16
    .globl SYMBOL(tactus_beatnet_weight_data)
SYMBOL(tactus_beatnet_weight_data):
    .incbin BEATNET_WEIGHTS_PATH
    .globl SYMBOL(tactus_beatnet_weight_data_end)
SYMBOL(tactus_beatnet_weight_data_end):
#if !defined(__APPLE__)
    .section .note.GNU-stack,"",@progbits
#endif
