// TagLib's C++ API behind the C interface of include/tactus_taglib.h.
#include "tactus_taglib.h"

#include <cctype>
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

/// What a file's first bytes say it holds, after an ID3v2 tag if one leads: FLAC (`fLaC`), Ogg
/// (`OggS`), MP4 (`ftyp` at byte 4), WAV or AIFF (`RIFF`, `FORM`), MP3 (an MPEG frame's sync);
/// `unknown` otherwise (an MP3 may have other bytes before its first frame).
enum class Content { unknown, mp3, flac, ogg, mp4, waveOrAIFF };

Content contentOf(TagLib::IOStream &stream) {
    stream.seek(0);
    const TagLib::ByteVector head = stream.readBlock(10);
    long offset = 0;
    if (head.size() == 10 && head.startsWith("ID3")) {
        // The size is 28 bits, 7 to a byte; a footer (flag 0x10) adds 10 bytes.
        const auto byte = [&head](unsigned index) { return static_cast<long>(static_cast<unsigned char>(head[index]) & 0x7F); };
        offset = 10 + (byte(6) << 21 | byte(7) << 14 | byte(8) << 7 | byte(9)) + ((head[5] & 0x10) ? 10 : 0);
    }
    stream.seek(offset);
    const TagLib::ByteVector bytes = stream.readBlock(12);
    stream.seek(0);
    if (bytes.startsWith("fLaC")) return Content::flac;
    if (bytes.startsWith("OggS")) return Content::ogg;
    if (bytes.size() >= 8 && bytes.mid(4, 4) == "ftyp") return Content::mp4;
    if (bytes.startsWith("RIFF") || bytes.startsWith("FORM")) return Content::waveOrAIFF;
    if (bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0xFF && (static_cast<unsigned char>(bytes[1]) & 0xE0) == 0xE0) {
        return Content::mp3;
    }
    return Content::unknown;
}

TactusTagsFormat formatOf(Content content) {
    switch (content) {
    case Content::mp3: return TACTUS_TAGS_FORMAT_MP3;
    case Content::flac: return TACTUS_TAGS_FORMAT_FLAC;
    case Content::ogg: return TACTUS_TAGS_FORMAT_OGG_VORBIS;
    case Content::mp4: return TACTUS_TAGS_FORMAT_MP4;
    default: return TACTUS_TAGS_FORMAT_OTHER;
    }
}

/// The format the extension of `name` says (case aside), OTHER for an extension TagLib opens
/// as none of these formats, or none.
TactusTagsFormat formatNamed(const std::string &name) {
    const auto dot = name.find_last_of("./");
    if (dot == std::string::npos || name[dot] != '.') return TACTUS_TAGS_FORMAT_OTHER;
    std::string extension = name.substr(dot + 1);
    for (char &c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (extension == "mp3") return TACTUS_TAGS_FORMAT_MP3;
    if (extension == "flac") return TACTUS_TAGS_FORMAT_FLAC;
    if (extension == "ogg" || extension == "oga") return TACTUS_TAGS_FORMAT_OGG_VORBIS;
    if (extension == "opus") return TACTUS_TAGS_FORMAT_OPUS;
    if (extension == "m4a" || extension == "m4b" || extension == "m4p" || extension == "mp4" || extension == "3g2") {
        return TACTUS_TAGS_FORMAT_MP4;
    }
    return TACTUS_TAGS_FORMAT_OTHER;
}

/// Whether bytes that say `content` can be a file of the format `named` (by its name).
bool contentFits(TactusTagsFormat named, Content content) {
    switch (named) {
    case TACTUS_TAGS_FORMAT_MP3: return content == Content::mp3 || content == Content::unknown;
    case TACTUS_TAGS_FORMAT_FLAC: return content == Content::flac;
    case TACTUS_TAGS_FORMAT_OGG_VORBIS: case TACTUS_TAGS_FORMAT_OPUS: return content == Content::ogg;
    case TACTUS_TAGS_FORMAT_MP4: return content == Content::mp4;
    default: return true;
    }
}

/// A file opened for TagLib, without reading the audio properties (only tags are needed). The
/// stream outlives the FileRef that reads it.
struct OpenedFile {
    NamedFileStream stream;
    /// The format the file's name says, and what its first bytes say.
    TactusTagsFormat named;
    Content content = Content::unknown;
    TagLib::FileRef ref;

    OpenedFile(const char *path, const char *name, bool readOnly) : stream(path, name, readOnly), named(formatNamed(name)) {
        if (stream.isOpen()) {
            content = contentOf(stream);
            ref = TagLib::FileRef(&stream, false);
        }
    }

    /// Whether TagLib opened the file and recognised its format.
    bool valid() const { return stream.isOpen() && !ref.isNull() && ref.file()->isValid(); }

    /// Whether the file's bytes are another format than its name says. (TagLib would take an
    /// Ogg or FLAC file named `.mp3` for MP3, and goes by the bytes only when the name's format
    /// cannot open them; other programs go by the name.)
    bool misnamed() const { return !contentFits(named, content); }

    /// OK, or why the file cannot be worked on.
    TactusTagsStatus status() const {
        if (!valid()) return TACTUS_TAGS_CANNOT_OPEN;
        return misnamed() ? TACTUS_TAGS_MISNAMED : TACTUS_TAGS_OK;
    }
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

extern "C" TactusTagsStatus tactus_tags_format(const char *path, const char *name, TactusTagsFormat *format, TactusTagsFormat *content) {
    try {
        OpenedFile opened(path, name, true);
        if (!opened.valid()) return TACTUS_TAGS_CANNOT_OPEN;
        *format = opened.misnamed() ? opened.named : formatOf(opened.ref.file());
        *content = formatOf(opened.content);
        return opened.status();
    } catch (const std::bad_alloc &) {
        return TACTUS_TAGS_INTERNAL;
    }
}

extern "C" TactusTagsStatus tactus_tags_read_property(
    const char *path, const char *name, const char *key, char *value, size_t capacity, int *found) {
    try {
        OpenedFile opened(path, name, true);
        if (const TactusTagsStatus status = opened.status(); status != TACTUS_TAGS_OK) return status;
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
        if (const TactusTagsStatus status = opened.status(); status != TACTUS_TAGS_OK) return status;
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
        if (const TactusTagsStatus status = opened.status(); status != TACTUS_TAGS_OK) return status;
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
