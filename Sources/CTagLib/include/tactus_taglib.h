// A plain C interface over TagLib's C++ API (FileRef, PropertyMap and the format-specific tags),
// for the Swift module TactusTags. TagLib 1.13's own C binding (tag_c.h) has no access to the
// BPM property, hence this small target. Every function opens the file at `path` (UTF-8; an
// open descriptor's `/proc/self/fd/N` does) and recognises its format by the extension of
// `name`, the file's own name (TagLib 1.13 knows formats by extension, then by content), and
// refuses a file whose first bytes are another format (TACTUS_TAGS_MISNAMED); none throws.
#ifndef TACTUS_TAGLIB_H
#define TACTUS_TAGLIB_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What a call did.
typedef enum {
    /// Done.
    TACTUS_TAGS_OK = 0,
    /// TagLib cannot open the file: missing, unreadable, or not a format it knows by the file's extension.
    TACTUS_TAGS_CANNOT_OPEN = 1,
    /// TagLib reads the file, but Tactus writes no BPM in its format.
    TACTUS_TAGS_UNSUPPORTED = 2,
    /// TagLib could not save the file (read-only, disk full...).
    TACTUS_TAGS_SAVE_FAILED = 3,
    /// The value does not fit in the buffer given.
    TACTUS_TAGS_VALUE_TOO_LONG = 4,
    /// TagLib failed in another way (out of memory).
    TACTUS_TAGS_INTERNAL = 5,
    /// The file's bytes are another format than its name says (a FLAC named `.mp3`): TagLib
    /// would read and write it as the name's format, so nothing is read or written.
    TACTUS_TAGS_MISNAMED = 6,
} TactusTagsStatus;

/// The container of a file, as TagLib opened it.
typedef enum {
    TACTUS_TAGS_FORMAT_OTHER = 0,
    TACTUS_TAGS_FORMAT_MP3 = 1,
    TACTUS_TAGS_FORMAT_FLAC = 2,
    TACTUS_TAGS_FORMAT_OGG_VORBIS = 3,
    TACTUS_TAGS_FORMAT_OPUS = 4,
    TACTUS_TAGS_FORMAT_MP4 = 5,
} TactusTagsFormat;

/// The format of the file at `path` (opened read-only) as its name says, in `*format`, and as
/// its first bytes say, in `*content` (Ogg Vorbis for any Ogg stream; OTHER for WAV, AIFF or
/// bytes not recognised); TACTUS_TAGS_MISNAMED when they disagree.
TactusTagsStatus tactus_tags_format(const char *path, const char *name, TactusTagsFormat *format, TactusTagsFormat *content);

/// The first value of the property `key` (a TagLib PropertyMap key such as "TITLE" or "ARTIST"),
/// NUL-terminated UTF-8 in `value` (at most `capacity` bytes); `*found` is 0 when the file has none.
TactusTagsStatus tactus_tags_read_property(const char *path, const char *name, const char *key, char *value, size_t capacity, int *found);

/// The BPM tag as written: for MP3 the `TXXX:BPM` frame when there is one (it keeps decimals),
/// else `TBPM`; for the other formats the `BPM` property (Vorbis comment, MP4 `tmpo`).
TactusTagsStatus tactus_tags_read_bpm(const char *path, const char *name, char *value, size_t capacity, int *found);

/// Writes a tempo into the file at `path`, changing no other tag: for MP3, the ID3v2 frames
/// `TBPM` = `integer_bpm` and `TXXX:BPM` = `decimal_bpm` (the ID3v2 tag keeps its version 2.3 or
/// 2.4; other tags, ID3v1 and APE, are left as they are); for FLAC, Ogg Vorbis and Opus, the
/// Vorbis comment `BPM` = `decimal_bpm`; for MP4, the `tmpo` atom = `integer_bpm`.
TactusTagsStatus tactus_tags_write_bpm(const char *path, const char *name, int integer_bpm, const char *decimal_bpm);

#ifdef __cplusplus
}
#endif

#endif
