// TagLib's C++ API behind the C interface of include/tactus_taglib.h.
#include "tactus_taglib.h"

#include <cstring>
#include <string>
#include <new>

#include <taglib/apetag.h>
#include <taglib/fileref.h>
#include <taglib/tfilestream.h>
#include <taglib/flacfile.h>
#include <taglib/id3v1tag.h>
#include <taglib/id3v2header.h>
#include <taglib/id3v2tag.h>
#include <taglib/mp4file.h>
#include <taglib/mpegfile.h>
#include <taglib/opusfile.h>
#include <taglib/textidentificationframe.h>
#include <taglib/tpropertymap.h>
#include <taglib/vorbisfile.h>
#include <taglib/xiphcomment.h>

namespace {

TactusTagsFormat formatOf(TagLib::File *file) {
    if (dynamic_cast<TagLib::MPEG::File *>(file)) return TACTUS_TAGS_FORMAT_MP3;
    if (dynamic_cast<TagLib::FLAC::File *>(file)) return TACTUS_TAGS_FORMAT_FLAC;
    if (dynamic_cast<TagLib::Ogg::Vorbis::File *>(file)) return TACTUS_TAGS_FORMAT_OGG_VORBIS;
    if (dynamic_cast<TagLib::Ogg::Opus::File *>(file)) return TACTUS_TAGS_FORMAT_OPUS;
    if (dynamic_cast<TagLib::MP4::File *>(file)) return TACTUS_TAGS_FORMAT_MP4;
    return TACTUS_TAGS_FORMAT_OTHER;
}

/// Copies `text` as NUL-terminated UTF-8 into `value`.
TactusTagsStatus copyOut(const TagLib::String &text, char *value, size_t capacity) {
    const std::string utf8 = text.to8Bit(true);
    if (utf8.size() + 1 > capacity) return TACTUS_TAGS_VALUE_TOO_LONG;
    std::memcpy(value, utf8.c_str(), utf8.size() + 1);
    return TACTUS_TAGS_OK;
}

/// The file's properties. An MP3's ID3v2 tag comes first, completed by its APE and ID3v1 tags
/// (TagLib's own PropertyMap of an MP3 holds only the first tag that has any).
TagLib::PropertyMap propertiesOf(TagLib::File *file) {
    auto *mpeg = dynamic_cast<TagLib::MPEG::File *>(file);
    if (!mpeg) return file->properties();
    TagLib::PropertyMap merged;
    if (mpeg->hasID3v2Tag()) merged = mpeg->ID3v2Tag()->properties();
    const TagLib::PropertyMap others[] = {
        mpeg->hasAPETag() ? mpeg->APETag()->properties() : TagLib::PropertyMap(),
        mpeg->hasID3v1Tag() ? mpeg->ID3v1Tag()->properties() : TagLib::PropertyMap(),
    };
    for (const auto &properties : others) {
        for (const auto &entry : properties) {
            if (!merged.contains(entry.first)) merged.insert(entry.first, entry.second);
        }
    }
    return merged;
}

/// A file opened by `path` (such as `/proc/self/fd/N`, which has no extension) that TagLib
/// knows by `name`: FileRef recognises a format by the extension of its stream's name.
class NamedFileStream : public TagLib::FileStream {
public:
    NamedFileStream(const char *path, const char *name, bool readOnly)
        : TagLib::FileStream(path, readOnly), name_(name) {}

    TagLib::FileName name() const override { return name_.c_str(); }

private:
    std::string name_;
};

/// A file opened for TagLib, without reading the audio properties (only tags are needed). The
/// stream outlives the FileRef that reads it.
struct OpenedFile {
    NamedFileStream stream;
    TagLib::FileRef ref;

    OpenedFile(const char *path, const char *name, bool readOnly) : stream(path, name, readOnly) {
        if (stream.isOpen()) ref = TagLib::FileRef(&stream, false);
    }

    /// Whether TagLib opened the file and recognised its format.
    bool valid() const { return stream.isOpen() && !ref.isNull() && ref.file()->isValid(); }
};

/// Replaces the text frame `id` of an ID3v2 tag by one holding `text`.
void replaceTextFrame(TagLib::ID3v2::Tag *tag, const char *id, const TagLib::String &text) {
    tag->removeFrames(id);
    auto *frame = new TagLib::ID3v2::TextIdentificationFrame(id, TagLib::String::Latin1);
    frame->setText(text);
    tag->addFrame(frame);
}

TactusTagsStatus writeMPEG(TagLib::MPEG::File *file, int integerBPM, const TagLib::String &decimalBPM) {
    const bool hadID3v2 = file->hasID3v2Tag();
    TagLib::ID3v2::Tag *tag = file->ID3v2Tag(true);
    // Keep the tag's version: TagLib writes 2.3 and 2.4 (an older or a new tag becomes 2.4).
    const TagLib::ID3v2::Version version =
        hadID3v2 && tag->header()->majorVersion() == 3 ? TagLib::ID3v2::v3 : TagLib::ID3v2::v4;
    replaceTextFrame(tag, "TBPM", TagLib::String::number(integerBPM));
    if (auto *user = TagLib::ID3v2::UserTextIdentificationFrame::find(tag, "BPM")) {
        user->setText(decimalBPM);
    } else {
        auto *frame = new TagLib::ID3v2::UserTextIdentificationFrame(TagLib::String::Latin1);
        frame->setDescription("BPM");
        frame->setText(decimalBPM);
        tag->addFrame(frame);
    }
    // Only the ID3v2 tag is written: ID3v1 and APE tags stay as they are, none is created. A new
    // ID3v2 tag takes the ID3v1 tag's fields, as players that read ID3v2 alone would otherwise
    // lose the title and artist; an existing one is left as it was.
    const auto duplicate = hadID3v2 ? TagLib::File::DoNotDuplicate : TagLib::File::Duplicate;
    return file->save(TagLib::MPEG::File::ID3v2, TagLib::File::StripNone, version, duplicate)
        ? TACTUS_TAGS_OK : TACTUS_TAGS_SAVE_FAILED;
}

TactusTagsStatus writeXiph(TagLib::File *file, TagLib::Ogg::XiphComment *comment, const TagLib::String &decimalBPM) {
    if (!comment) return TACTUS_TAGS_UNSUPPORTED;
    comment->addField("BPM", decimalBPM, true);
    return file->save() ? TACTUS_TAGS_OK : TACTUS_TAGS_SAVE_FAILED;
}

TactusTagsStatus writeMP4(TagLib::MP4::File *file, int integerBPM) {
    TagLib::MP4::Tag *tag = file->tag();
    if (!tag) return TACTUS_TAGS_UNSUPPORTED;
    tag->setItem("tmpo", TagLib::MP4::Item(integerBPM));
    return file->save() ? TACTUS_TAGS_OK : TACTUS_TAGS_SAVE_FAILED;
}

}  // namespace

extern "C" TactusTagsStatus tactus_tags_format(const char *path, const char *name, TactusTagsFormat *format) {
    try {
        OpenedFile opened(path, name, true);
        if (!opened.valid()) return TACTUS_TAGS_CANNOT_OPEN;
        *format = formatOf(opened.ref.file());
        return TACTUS_TAGS_OK;
    } catch (const std::bad_alloc &) {
        return TACTUS_TAGS_INTERNAL;
    }
}

extern "C" TactusTagsStatus tactus_tags_read_property(
    const char *path, const char *name, const char *key, char *value, size_t capacity, int *found) {
    try {
        OpenedFile opened(path, name, true);
        if (!opened.valid()) return TACTUS_TAGS_CANNOT_OPEN;
        const TagLib::PropertyMap properties = propertiesOf(opened.ref.file());
        const auto entry = properties.find(TagLib::String(key, TagLib::String::UTF8));
        *found = entry != properties.end() && !entry->second.isEmpty();
        return *found ? copyOut(entry->second.front(), value, capacity) : TACTUS_TAGS_OK;
    } catch (const std::bad_alloc &) {
        return TACTUS_TAGS_INTERNAL;
    }
}

extern "C" TactusTagsStatus tactus_tags_read_bpm(const char *path, const char *name, char *value, size_t capacity, int *found) {
    try {
        OpenedFile opened(path, name, true);
        if (!opened.valid()) return TACTUS_TAGS_CANNOT_OPEN;
        if (auto *mpeg = dynamic_cast<TagLib::MPEG::File *>(opened.ref.file())) {
            if (mpeg->hasID3v2Tag()) {
                auto *user = TagLib::ID3v2::UserTextIdentificationFrame::find(mpeg->ID3v2Tag(), "BPM");
                if (user && user->fieldList().size() > 1 && !user->fieldList()[1].isEmpty()) {
                    *found = 1;
                    // The first field of a TXXX frame is its description, the value follows.
                    return copyOut(user->fieldList()[1], value, capacity);
                }
            }
        }
        const TagLib::PropertyMap properties = propertiesOf(opened.ref.file());
        const auto entry = properties.find("BPM");
        *found = entry != properties.end() && !entry->second.isEmpty();
        return *found ? copyOut(entry->second.front(), value, capacity) : TACTUS_TAGS_OK;
    } catch (const std::bad_alloc &) {
        return TACTUS_TAGS_INTERNAL;
    }
}

extern "C" TactusTagsStatus tactus_tags_write_bpm(const char *path, const char *name, int integer_bpm, const char *decimal_bpm) {
    try {
        OpenedFile opened(path, name, false);
        if (!opened.valid()) return TACTUS_TAGS_CANNOT_OPEN;
        if (opened.ref.file()->readOnly()) return TACTUS_TAGS_SAVE_FAILED;
        const TagLib::String decimal(decimal_bpm, TagLib::String::UTF8);
        TagLib::File *file = opened.ref.file();
        switch (formatOf(file)) {
        case TACTUS_TAGS_FORMAT_MP3:
            return writeMPEG(static_cast<TagLib::MPEG::File *>(file), integer_bpm, decimal);
        case TACTUS_TAGS_FORMAT_FLAC:
            return writeXiph(file, static_cast<TagLib::FLAC::File *>(file)->xiphComment(true), decimal);
        case TACTUS_TAGS_FORMAT_OGG_VORBIS:
            return writeXiph(file, static_cast<TagLib::Ogg::Vorbis::File *>(file)->tag(), decimal);
        case TACTUS_TAGS_FORMAT_OPUS:
            return writeXiph(file, static_cast<TagLib::Ogg::Opus::File *>(file)->tag(), decimal);
        case TACTUS_TAGS_FORMAT_MP4:
            return writeMP4(static_cast<TagLib::MP4::File *>(file), integer_bpm);
        case TACTUS_TAGS_FORMAT_OTHER:
            return TACTUS_TAGS_UNSUPPORTED;
        }
        return TACTUS_TAGS_UNSUPPORTED;
    } catch (const std::bad_alloc &) {
        return TACTUS_TAGS_INTERNAL;
    }
}
