import GRDB

/// The library's schema, as a list of GRDB migrations applied in order.
///
/// A migration is never edited once it has shipped: a library file records which migrations
/// it has run, and a change goes into a new migration appended at the end of
/// ``migrator`` (the job queue of the server will be the next one). `protocol/DATABASE.md`
/// describes the resulting tables for programs that read the file directly.
///
/// ## Tables (after `v1`)
///
/// - `songs`: one row per audio file content. `id` is an integer key used by the other
///   tables; `sha256` is the song's public identity (64 lowercase hex digits). File name,
///   byte size, format, codec, sample rate, channels, duration in seconds, tags (`title`,
///   `artist`, `album`, `genre`, `year`), `added_at`, and the energy envelope: `envelope`
///   (see ``PackedEnvelope``) with `envelope_hop_s`.
/// - `analyses`: one row per (song, detector, detector version, parameter hash). Parameters
///   are stored as canonical JSON (`params_json`) and its SHA-256 (`params_hash`); `status`
///   is `done`, `no-tempo` or `failed`; `bpm` is set exactly when the status is `done`;
///   `candidates_json` is a JSON array of `{"bpm":…,"strength":…}`; `windows` is the
///   per-window series (see ``PackedWindows``); `seconds`, `worker`, `analyzed_at`,
///   `reason` (why no tempo), `error_code` and `error_message` (why it failed).
/// - `consensus`: one row per song: the consensus tempo (`bpm`, null when no detector found
///   one), the agreeing detectors (`detectors`, a JSON array of names) and their count
///   (`detector_count`), recomputed in the same transaction as any change to the song's
///   analyses.
/// - `reference_tempi`: the tempo a person asserts for a song (`bpm`), where it comes from
///   (`source`: `manual`, `csv:NAME`, `tag`) and when it was set; at most one per song.
///
/// ## Tables (after `v2`)
///
/// - `jobs`: the coordinator's durable queue, one row per (song, detector, parameters)
///   request. `params_json` holds the parameters the client gave (canonical JSON, possibly
///   `{}`); `state` is `queued`, `running`, `done`, `failed` or `cancelled`; `attempts`
///   counts dispatches to a worker; `worker` is the last worker's id; `error_code` and
///   `error_message` say why a job failed or was cancelled. A job whose state is `running`
///   when the coordinator starts was interrupted and is queued again.
///
/// ## Tables (after `v4`)
///
/// - `song_locations`: where a song analysed in place lies: its library `root` (absolute, as
///   resolved by the server) and `path` below it (`/`-separated, no `.` or `..`), the file's
///   `byte_size` and modification time (`mtime_ns`, nanoseconds since 1970) when last seen
///   (`seen_at`), and `missing_since`, set when a scan found the file gone. One row per
///   (root, path); a song can have several (copies of the same bytes).
/// - `songs.missing`: 1 when the song has locations and every one is missing; such songs are
///   left out of queries and playlists until a scan finds them again.
///
/// ## Indexes (after `v6`)
///
/// - `analyses_by_detector_bpm` on `(detector, bpm, song_id, confidence)` and `consensus_by_bpm`
///   on `(bpm, detector_count, song_id, confidence)`: the tempo indexes hold the confidence.
/// - `songs_missing`: the ids of the missing songs (a partial index).
/// - `songs_by_title` (the title, else the file name, ignoring ASCII case), `songs_by_duration`,
///   `songs_by_artist` and `songs_by_artist_descending` (songs without an artist last, each way):
///   whole-library pages by title, duration or artist walk the songs in order (`Library.walksSongs`).
///
/// ## Tables (after `v10`)
///
/// - `refused_files`: files below a library root that a scan refused for their content, by
///   `root` and `path`, with the `byte_size`, `mtime_ns` and `ctime_ns` they had, the refusal
///   (`error_code`, `error_message`), the `reader_version` (``AudioReaders/revision``) that
///   refused them, how many scans in a row did (`refusals`) and `refused_at`. Once refused
///   twice, a scan finding the same size, times and version lists the file as skipped again
///   without reading it.
///
/// Times are UTC text `YYYY-MM-DD HH:MM:SS.SSS` (GRDB's date format, understood by SQLite's
/// date functions).
enum Schema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: songs, analyses, consensus, reference tempi") { db in
            try db.execute(
                sql: """
                    CREATE TABLE songs (
                        id INTEGER PRIMARY KEY,
                        sha256 TEXT NOT NULL UNIQUE CHECK (length(sha256) = 64),
                        file_name TEXT NOT NULL,
                        byte_size INTEGER NOT NULL CHECK (byte_size >= 0),
                        format TEXT NOT NULL,
                        codec TEXT,
                        sample_rate INTEGER NOT NULL CHECK (sample_rate > 0),
                        channels INTEGER NOT NULL CHECK (channels > 0),
                        duration_s REAL NOT NULL CHECK (duration_s >= 0),
                        title TEXT,
                        artist TEXT,
                        album TEXT,
                        genre TEXT,
                        year INTEGER,
                        added_at TEXT NOT NULL,
                        envelope BLOB,
                        envelope_hop_s REAL CHECK (envelope_hop_s > 0),
                        CHECK ((envelope IS NULL) = (envelope_hop_s IS NULL))
                    );

                    CREATE TABLE analyses (
                        id INTEGER PRIMARY KEY,
                        song_id INTEGER NOT NULL REFERENCES songs(id) ON DELETE CASCADE,
                        detector TEXT NOT NULL,
                        detector_version TEXT NOT NULL,
                        params_json TEXT NOT NULL,
                        params_hash TEXT NOT NULL,
                        status TEXT NOT NULL CHECK (status IN ('done', 'no-tempo', 'failed')),
                        bpm REAL CHECK (bpm BETWEEN 1 AND 1000),
                        confidence REAL NOT NULL,
                        candidates_json TEXT NOT NULL,
                        windows BLOB NOT NULL,
                        seconds REAL NOT NULL CHECK (seconds >= 0),
                        worker TEXT,
                        analyzed_at TEXT NOT NULL,
                        reason TEXT,
                        error_code TEXT,
                        error_message TEXT,
                        CHECK ((status = 'done') = (bpm IS NOT NULL)),
                        CHECK ((status = 'failed') = (error_code IS NOT NULL))
                    );
                    CREATE UNIQUE INDEX analyses_identity ON analyses(song_id, detector, detector_version, params_hash);
                    CREATE INDEX analyses_by_detector_bpm ON analyses(detector, bpm, song_id);

                    CREATE TABLE consensus (
                        song_id INTEGER PRIMARY KEY REFERENCES songs(id) ON DELETE CASCADE,
                        bpm REAL,
                        detectors TEXT NOT NULL,
                        detector_count INTEGER NOT NULL
                    );
                    CREATE INDEX consensus_by_bpm ON consensus(bpm, detector_count, song_id);

                    CREATE TABLE reference_tempi (
                        song_id INTEGER PRIMARY KEY REFERENCES songs(id) ON DELETE CASCADE,
                        bpm REAL NOT NULL CHECK (bpm BETWEEN 1 AND 1000),
                        source TEXT NOT NULL,
                        set_at TEXT NOT NULL
                    );
                    """)
        }
        migrator.registerMigration("v2: jobs") { db in
            try db.execute(
                sql: """
                    CREATE TABLE jobs (
                        id INTEGER PRIMARY KEY,
                        song_id INTEGER NOT NULL REFERENCES songs(id) ON DELETE CASCADE,
                        detector TEXT NOT NULL,
                        params_json TEXT NOT NULL,
                        state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
                        attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
                        worker TEXT,
                        error_code TEXT,
                        error_message TEXT,
                        created_at TEXT NOT NULL,
                        updated_at TEXT NOT NULL
                    );
                    CREATE INDEX jobs_by_state ON jobs(state, detector, id);
                    CREATE INDEX jobs_by_song ON jobs(song_id, id);
                    """)
        }
        // Detectors of version 2 report calibrated confidences, and the consensus one of its
        // own. Rows written before stay NULL until their song's analyses next change.
        migrator.registerMigration("v3: consensus confidence") { db in
            try db.execute(sql: "ALTER TABLE consensus ADD COLUMN confidence REAL CHECK (confidence BETWEEN 0 AND 1)")
        }
        // Songs analysed in place under a library root: where each file lies (root and path
        // below it), its size and modification time when last seen, and whether it is missing.
        // `songs.missing` is 1 when a song has locations and none of them is present any more,
        // so queries leave it out without looking at its locations.
        migrator.registerMigration("v4: song locations") { db in
            try db.execute(
                sql: """
                    CREATE TABLE song_locations (
                        id INTEGER PRIMARY KEY,
                        song_id INTEGER NOT NULL REFERENCES songs(id) ON DELETE CASCADE,
                        root TEXT NOT NULL CHECK (length(root) > 0),
                        path TEXT NOT NULL CHECK (length(path) > 0),
                        byte_size INTEGER NOT NULL CHECK (byte_size >= 0),
                        mtime_ns INTEGER NOT NULL,
                        seen_at TEXT NOT NULL,
                        missing_since TEXT,
                        UNIQUE (root, path)
                    );
                    CREATE INDEX song_locations_by_song ON song_locations(song_id);
                    ALTER TABLE songs ADD COLUMN missing INTEGER NOT NULL DEFAULT 0 CHECK (missing IN (0, 1));
                    """)
        }
        // Detectors that track beats (beatnet) store the beat and downbeat times: the JSON of
        // BeatPositions, {"times": [...], "downbeats": [...]}. NULL for the others and for rows
        // written before.
        migrator.registerMigration("v5: beat positions") { db in
            try db.execute(sql: "ALTER TABLE analyses ADD COLUMN beats_json TEXT")
        }
        // Queries sorted by confidence or agreement, and every match's confidence, read from the
        // tempo indexes alone: they now hold the confidence too (rebuilt once, from the table).
        // Pages by title, artist or duration of a dense range walk the songs in that order.
        // Queries leave out the missing songs by listing them once from a partial index (there
        // are few) instead of looking each match up in `songs`, which cost a whole-library range
        // or histogram most of its time (0.15 s of 0.18 s over 100,000 songs).
        migrator.registerMigration("v6: confidence in the tempo indexes, missing songs index") { db in
            try db.execute(
                sql: """
                    DROP INDEX analyses_by_detector_bpm;
                    CREATE INDEX analyses_by_detector_bpm ON analyses(detector, bpm, song_id, confidence);
                    DROP INDEX consensus_by_bpm;
                    CREATE INDEX consensus_by_bpm ON consensus(bpm, detector_count, song_id, confidence);
                    CREATE INDEX songs_missing ON songs(id) WHERE missing = 1;
                    CREATE INDEX songs_by_title ON songs(COALESCE(NULLIF(title, ''), file_name) COLLATE NOCASE);
                    CREATE INDEX songs_by_duration ON songs(duration_s);
                    CREATE INDEX songs_by_artist ON songs((NULLIF(artist, '') IS NULL), NULLIF(artist, '') COLLATE NOCASE);
                    CREATE INDEX songs_by_artist_descending ON songs((NULLIF(artist, '') IS NOT NULL), NULLIF(artist, '') COLLATE NOCASE);
                    """)
        }
        // The tempo map of each song's consensus (TempoMap's JSON) and whether it is stable,
        // for `query --stable`; NULL for consensus rows written before, until their song's
        // analyses change.
        migrator.registerMigration("v7: tempo maps") { db in
            try db.execute(
                sql: """
                    ALTER TABLE consensus ADD COLUMN tempo_map_json TEXT;
                    ALTER TABLE consensus ADD COLUMN tempo_stable INTEGER CHECK (tempo_stable IN (0, 1));
                    """)
        }
        // Each song's constant beat grid (BeatGrid's JSON), fitted by the worker at the consensus
        // tempo of the detectors it ran; NULL for songs analysed before, or with no clear beat.
        migrator.registerMigration("v8: beat grids") { db in
            try db.execute(sql: "ALTER TABLE songs ADD COLUMN beat_grid_json TEXT")
        }
        // Files below a library root that a scan refused for their content (not audio, corrupt,
        // truncated, empty), with the size and modification time they had, the revision of the
        // readers that refused them and how many scans in a row did: once two have, later scans
        // list them again without reading them while all three are the same (cover images,
        // playlists and notes are not hashed and probed on every scan; a read error met once
        // does not hide a song).
        migrator.registerMigration("v9: refused files") { db in
            try db.execute(
                sql: """
                    CREATE TABLE refused_files (
                        root TEXT NOT NULL CHECK (length(root) > 0),
                        path TEXT NOT NULL CHECK (length(path) > 0),
                        byte_size INTEGER NOT NULL CHECK (byte_size >= 0),
                        mtime_ns INTEGER NOT NULL,
                        error_code TEXT NOT NULL,
                        error_message TEXT NOT NULL,
                        reader_version TEXT NOT NULL,
                        refusals INTEGER NOT NULL CHECK (refusals >= 1),
                        refused_at TEXT NOT NULL,
                        PRIMARY KEY (root, path)
                    ) WITHOUT ROWID
                    """)
        }
        migrator.registerMigration("v10: refused files' change times") { db in
            // A refusal keyed on size and modification time alone hid a song written over a
            // refused file of the same size with its time put back (attack round 8, L1). Rows
            // recorded before have none, and match no file: those files are read again once.
            try db.execute(sql: "ALTER TABLE refused_files ADD COLUMN ctime_ns INTEGER")
        }
        migrator.registerMigration("v11: song locations' change times") { db in
            // A file rewritten with its size and modification time kept (a tag editor told to
            // keep the file's time) was taken for unchanged. Rows recorded before have none: a
            // scan records it for an unchanged file (``Library/recordChangeTimes(atRoot:_:)``).
            try db.execute(sql: "ALTER TABLE song_locations ADD COLUMN ctime_ns INTEGER")
        }
        return migrator
    }
}
