/// The revision of the audio readers' acceptance: what `TactusAudio` decodes and what it refuses
/// (formats, codecs, limits). A library records with each file a scan refused the revision that
/// refused it, and reads the file again under another; bump it with any change that makes a
/// refused file readable.
public enum AudioReaders {
    public static let revision = "readers-1"
}

