# The Python side of the faster-whisper speech engine (adapters/ctranslate2/fasterWhisper.ts):
# one process per engine, the model loaded once, one transcription at a time. Requests come as
# JSON lines on stdin, answers go as JSON lines on stdout; CTranslate2's own log (which CPU
# instruction set it selected) goes to stderr. Stopping a transcription is done by killing the
# process: nothing here needs to be interruptible.
#
#   argv: <model dir> <threads> <compute type> <beam size> [<allowed languages, comma-separated>]
#   in:   {"id": 1, "wav": "/path/16k-mono.wav", "language": "es" | null,
#          "speech": [[0.5, 3.2, 0], ...] | null}   (the service's VAD, in seconds, with the
#                                                   speaker when the diarizer knows it, else null)
#   out:  {"type": "ready", ...versions and model facts}
#         {"type": "progress", "id": 1, "percent": 42.0}
#         {"type": "result", "id": 1, "language": "es", "languageProbability": 0.98,
#          "languages": [["es", 61.2], ["en", 4.1]], "segments": [...], "regions": [...]}
#         {"type": "error", "id": 1, "message": "..."}
#
# How a recording is heard (docs/speech-models.md):
#  1. Speech regions: the service's VAD (or, without one, the Silero VAD faster-whisper bundles)
#     gives where someone speaks. A region is a stretch between pauses (0.4 s or more) and, when
#     the diarizer found the speakers first, between speaker changes. At most 28 s each.
#  2. Language per region: Whisper's language identification on the region alone, limited to the
#     allowed languages (ASR_LANGUAGES), its probabilities taken given that the language is one of
#     them (renormalised: espeak-ng's French is heard as Polish 0.26, French 0.24, Czech 0.22 by
#     the base model, and as French 0.91 among six allowed languages). The recording's languages
#     are its majority language and those heard clearly (p >= 0.6, regions of 1.5 s or more) for
#     3 s in all. A region heard clearly in one of them keeps it; any other region takes the most
#     probable of the recording's languages for it (before: always the majority, so a clear
#     language's unsure turns went to the majority). A language hint skips this: it holds everywhere.
#  3. Decoding: each region is decoded in its own language, alone or with the regions of the
#     same language that follow it within 1 s (up to 15 s of joined audio: a short sentence alone
#     is misheard more often). No text is carried from one unit to the next
#     (condition_on_previous_text=False), so a language change never turns into a translation,
#     and Whisper's no-speech filter is off: the VAD decided. (Units of up to 28 s lost whole
#     turns when the decoder ended a unit early: bench/speech-quality.ts, 6 of 31 turns without
#     text against 1 with each region alone.) A unit of one region reuses the encoder pass of its
#     language identification (EncoderCache). A language written in the Latin script is decoded
#     without the tokens of other scripts (LATIN_SCRIPT): no Chinese characters in an English turn.
#  4. Determinism: temperature 0 only (greedy, or beam search when configured); a unit whose text
#     loops (compression ratio over 2.4) is decoded again with beam search (5), and if that loops
#     too, with beam search that may not repeat any three tokens (no_repeat_ngram_size 3): both
#     deterministic, instead of faster-whisper's sampling at rising temperatures. (A held-out
#     French clip came back "Je, ou, ou, ou, …" greedy and with beam 5 alike, and as "Je t'ouvre
#     que le conseil était meilleur que l'année dernière." with the third.)
import hashlib
import json
import logging
import sys
import wave

import numpy as np
import ctranslate2
import faster_whisper
from faster_whisper import WhisperModel
from faster_whisper.vad import VadOptions, get_speech_timestamps

RATE = 16000
# A region is at most this long (s).
MAX_REGION = 28.0
# Added around each VAD range so the first and last phonemes are in (s).
PAD = 0.2
# A unit's regions are joined with this much silence between them (s).
JOIN_SILENCE = 0.3
# A region is heard confidently when its top language has at least this probability and it is at
# least this long; otherwise it takes the most probable of the recording's languages.
MIN_CONFIDENCE = 0.6
MIN_LID_SECONDS = 1.5
# A language other than the majority is one of the recording's only with this much clear speech (s).
MIN_LANGUAGE_SECONDS = 3.0
LOOPING_RATIO = 2.4
# The last decode of a unit that still loops may not repeat any run of this many tokens.
NO_REPEAT_NGRAM = 3
# Regions of one language less than JOIN_GAP apart (s) are decoded together up to MAX_UNIT (s):
# a short sentence alone is misheard more often than with its neighbours, and a long joined unit
# loses whole turns when the decoder stops early (see the header).
JOIN_GAP = 1.0
MAX_UNIT = 15.0
# A region a joined decode left without a word is decoded again alone if it is at least this long (s).
MIN_LONE_SECONDS = 0.5
# Languages written in the Latin script (Whisper's codes). Decoding one of them, no token that
# holds a letter of another script may come out: Whisper base, decoding an English turn of a
# held-out meeting, wrote "The museum opens at昂珊铁林" (truth: "...opens late on Thursday evenings").
LATIN_SCRIPT = frozenset(
    "af az br bs ca cs cy da de en es et eu fi fo fr gl ha haw hr ht hu id is it jw la lb ln lt lv mg mi ms mt nl "
    "nn no oc pl pt ro sk sl sn so sq su sv sw tk tl tr uz vi yo".split()
)
# UTF-8 lead bytes of other scripts: U+0380-U+07FF (Greek, Cyrillic, Armenian, Hebrew, Arabic, ...),
# U+0800-U+0FFF (Indic, Thai, Tibetan, ...), U+3000-U+FFFF (CJK, kana, Hangul, fullwidth forms)
# and U+10000 on (emoji, rarer scripts). Not listed, so allowed: U+0000-U+037F (Latin letters and
# their diacritics) and U+1000-U+2FFF (Vietnamese letters, punctuation, currency signs, the music
# note Whisper writes), whose lead bytes E1 and E2 also begin a few other scripts' letters. None of
# these bytes can be a continuation byte (0x80-0xBF), so any token holding one begins such a letter.
OTHER_SCRIPT_LEADS = frozenset([*range(0xCE, 0xE1), *range(0xE3, 0xF5)])


def send(obj):
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def read_wav(path):
    """16-bit PCM WAV (what the pipeline's ffmpeg step writes) as float32 samples in [-1, 1]."""
    with wave.open(path, "rb") as w:
        if w.getsampwidth() != 2 or w.getframerate() != RATE:
            raise ValueError("expected 16 kHz 16-bit PCM")
        frames = w.readframes(w.getnframes())
        samples = np.frombuffer(frames, dtype=np.int16).astype(np.float32) / 32768.0
        if w.getnchannels() > 1:
            samples = samples.reshape(-1, w.getnchannels()).mean(axis=1)
        return samples


def clean(text):
    """Text without U+FFFD: a multi-byte character split between tokens decodes to it."""
    return text.replace("\ufffd", "")


def speech_ranges(audio, given):
    """Speech stretches [start, end, speaker] in seconds: the service's VAD (cut at speaker changes
    when it knows the speakers) when given, else the bundled Silero VAD. Each is padded, and
    stretches that then touch are joined unless their speakers differ: there the cut stays where
    the second speaker starts."""
    duration = len(audio) / RATE
    if given is None:
        found = get_speech_timestamps(audio, VadOptions(min_silence_duration_ms=300, speech_pad_ms=0))
        given = [(c["start"] / RATE, c["end"] / RATE) for c in found]
    items = sorted((float(r[0]), float(r[1]), r[2] if len(r) > 2 else None) for r in given)
    ranges = []
    for start, end, speaker in items:
        if end <= start:
            continue
        padded = [max(0.0, start - PAD), min(duration, end + PAD), speaker]
        if ranges and padded[0] <= ranges[-1][1]:
            if speaker == ranges[-1][2]:
                ranges[-1][1] = max(ranges[-1][1], padded[1])
                continue
            cut = max(ranges[-1][0], min(ranges[-1][1], start))
            ranges[-1][1] = cut
            padded[0] = cut
        ranges.append(padded)
    return [r for r in ranges if r[1] > r[0]]


def regions_of(ranges):
    """Regions to identify the language of: the speech stretches as cut by pauses and speaker
    changes (a speaker's stretches are not joined across a pause: two voices the diarizer took
    for one must not share a language), none longer than MAX_REGION."""
    out = []
    for start, end, _ in ranges:
        while end - start > MAX_REGION:
            out.append([start, start + MAX_REGION])
            start += MAX_REGION
        out.append([start, end])
    return out


def samples(audio, start, end):
    return audio[int(start * RATE):int(end * RATE)]


class EncoderCache:
    """The encoder's output for the last few 30-s windows of features. A region's language
    identification and the decode of that region alone (the usual unit: a speaker's turn) encode
    the same window, so the decode's encoder pass comes free. The output is the same numbers
    either way, so transcripts do not change."""

    def __init__(self, encode, size=4):
        self.encode = encode
        self.size = size
        self.kept = {}

    def __call__(self, features):
        f = np.ascontiguousarray(features)
        key = (f.shape, str(f.dtype), hashlib.blake2b(f.tobytes(), digest_size=16).digest())
        if key in self.kept:
            return self.kept[key]
        out = self.encode(features)
        if len(self.kept) >= self.size:
            self.kept.pop(next(iter(self.kept)))
        self.kept[key] = out
        return out


class Unit:
    """Regions of one language decoded together: their audio joined, and the way back to the recording's times."""

    def __init__(self, language):
        self.language = language
        # Decoded again alone after a joined decode heard nothing in it.
        self.again = False
        # Decoded without word times (faster-whisper's alignment failed): which region a word is in is unknown.
        self.untimed = False
        self.parts = []  # (offset in the joined audio, start in the recording, length), seconds
        self.ends = []  # each part's end in the recording, as given (start + length can differ in the last bit)
        self.length = 0.0

    def would_be(self, region):
        return self.length + (JOIN_SILENCE if self.parts else 0.0) + (region[1] - region[0])

    def add(self, region):
        if self.parts:
            self.length += JOIN_SILENCE
        self.parts.append((self.length, region[0], region[1] - region[0]))
        self.ends.append(region[1])
        self.length += region[1] - region[0]

    def audio(self, audio):
        gap = np.zeros(int(JOIN_SILENCE * RATE), dtype=np.float32)
        pieces = []
        for i, ((_, start, _), end) in enumerate(zip(self.parts, self.ends)):
            if i:
                pieces.append(gap)
            # The same samples as the region's language identification took: the same encoder window.
            pieces.append(samples(audio, start, end))
        return np.concatenate(pieces)

    def to_recording(self, t):
        """A time in the joined audio as a time in the recording (a time in a joining silence goes to the nearest region)."""
        best = self.parts[0]
        for part in self.parts:
            if t >= part[0]:
                best = part
        offset, start, length = best
        return start + min(max(t - offset, 0.0), length)


def byte_of_symbol():
    """GPT-2's byte-level BPE (Whisper's tokenizer) writes each byte of a token as one printable
    character; this is the way back."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("\u00a1"), ord("\u00ac") + 1), *range(ord("\u00ae"), ord("\u00ff") + 1)]
    symbols = printable[:]
    n = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            symbols.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(printable, symbols)}


def other_script_tokens(hf_tokenizer):
    """The ids of the tokens that hold a byte beginning a letter of a script other than Latin."""
    back = byte_of_symbol()
    out = []
    for token, i in hf_tokenizer.get_vocab().items():
        if token.startswith("<|") or any(c not in back for c in token):
            continue
        if any(back[c] in OTHER_SCRIPT_LEADS for c in token):
            out.append(i)
    return sorted(out)


_suppressed = {}


def suppress_tokens(model, language):
    """faster-whisper's default suppression (-1), and for a Latin-script language the other scripts' tokens."""
    if language not in LATIN_SCRIPT:
        return [-1]
    key = id(model.hf_tokenizer)
    if key not in _suppressed:
        _suppressed[key] = other_script_tokens(model.hf_tokenizer)
    return [-1, *_suppressed[key]]


def decode(model, unit_audio, language, beam_size, word_timestamps=True, no_repeat_ngram_size=0):
    segments, _ = model.transcribe(
        unit_audio,
        language=language,
        suppress_tokens=suppress_tokens(model, language),
        beam_size=beam_size,
        best_of=1,
        temperature=0.0,
        condition_on_previous_text=False,
        no_speech_threshold=None,
        log_prob_threshold=None,
        compression_ratio_threshold=None,
        word_timestamps=word_timestamps,
        no_repeat_ngram_size=no_repeat_ngram_size,
        vad_filter=False,
    )
    return list(segments)


def loops(segments):
    return any(s.compression_ratio > LOOPING_RATIO for s in segments)


def decode_unit(model, unit, audio, beam):
    """The unit's segments: greedy (or the configured beam); while the text loops, beam 5, then beam 5 without repeated 3-grams."""
    unit_audio = unit.audio(audio)

    def at(beam_size, no_repeat=0):
        try:
            return decode(model, unit_audio, unit.language, beam_size, no_repeat_ngram_size=no_repeat)
        except IndexError:
            # faster-whisper's word alignment indexes an empty alignment when a segment has no
            # frame to align (find_alignment: "boolean index did not match"; seen on the held-out
            # 11-minute meeting): the text without word times rather than a failed recording.
            unit.untimed = True
            return decode(model, unit_audio, unit.language, beam_size, word_timestamps=False, no_repeat_ngram_size=no_repeat)

    segments = at(beam)
    if beam < 5 and loops(segments):
        segments = at(5)
    if loops(segments):
        segments = at(max(beam, 5), NO_REPEAT_NGRAM)
    return segments


def unheard(unit, segments):
    """The unit's regions in which no word was decoded (the decoder ended the unit early), each as a unit of its own."""
    mids = [(w.start + w.end) / 2 for s in segments for w in (s.words or []) if clean(w.word).strip()]
    alone = []
    for offset, start, length in unit.parts:
        if length >= MIN_LONE_SECONDS and not any(offset <= m <= offset + length for m in mids):
            alone.append(Unit(unit.language))
            alone[-1].add([start, start + length])
    return alone


def identify(model, allowed, region_audio):
    """Probabilities of the allowed languages, most probable first (Whisper's language identification)."""
    # The features as transcribe() cuts them (without the last frame), so that the region's
    # decode finds this encoder pass in the cache.
    _, _, probs = model.detect_language(features=model.feature_extractor(region_audio)[..., :-1])
    kept = [(code, float(p)) for code, p in probs if code in allowed]
    total = sum(p for _, p in kept)
    return [(code, p / total) for code, p in kept] if total > 0 else [(allowed[0], 0.0)]


def main():
    model_dir, threads, compute_type, beam = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    allowed_arg = sys.argv[5] if len(sys.argv) > 5 else ""
    ctranslate2.set_log_level(logging.INFO)  # says which ISA it picked, on stderr
    model = WhisperModel(model_dir, device="cpu", compute_type=compute_type, cpu_threads=threads, num_workers=1)
    model.encode = EncoderCache(model.encode)
    multilingual = bool(model.model.is_multilingual)
    known = list(model.supported_languages)
    allowed = [code for code in allowed_arg.split(",") if code] if allowed_arg else known
    unknown = [code for code in allowed if code not in known]
    if unknown:
        raise SystemExit(f"ASR_LANGUAGES names languages this model does not know: {', '.join(unknown)}")
    send({
        "type": "ready",
        "ctranslate2": ctranslate2.__version__,
        "fasterWhisper": faster_whisper.__version__,
        "multilingual": multilingual,
        "languages": known,
        "allowedLanguages": allowed,
        "computeType": compute_type,
        "threads": threads,
    })

    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        rid = req["id"]
        try:
            audio = read_wav(req["wav"])
            duration = max(len(audio) / RATE, 0.001)
            forced = req.get("language") or (None if multilingual else "en")
            regions = regions_of(speech_ranges(audio, req.get("speech")))

            # Language per region, then the recording's language for the regions heard unsure:
            # the language with the most probability times speech over all regions.
            heard = []  # per region: top language, its probability, heard clearly, every allowed language's probability
            weight = {}
            for start, end in regions:
                if forced:
                    heard.append((forced, 1.0, True, {forced: 1.0}))
                    continue
                probs = identify(model, allowed, samples(audio, start, end))
                for code, p in probs:
                    weight[code] = weight.get(code, 0.0) + p * (end - start)
                code, p = probs[0]
                heard.append((code, p, p >= MIN_CONFIDENCE and end - start >= MIN_LID_SECONDS, dict(probs)))
            majority = forced or (min(weight.items(), key=lambda kv: (-kv[1], kv[0]))[0] if weight else allowed[0])
            # A language of the recording: the majority, and any heard clearly for long enough in
            # all (a short phrase heard as a language nobody else speaks is a mishearing).
            sure_seconds = {}
            for (start, end), (code, _, sure, _) in zip(regions, heard):
                if sure:
                    sure_seconds[code] = sure_seconds.get(code, 0.0) + (end - start)
            spoken = {majority} | {code for code, secs in sure_seconds.items() if secs >= MIN_LANGUAGE_SECONDS}
            languages = [
                code if sure and code in spoken else max(sorted(spoken), key=lambda c: (probs.get(c, 0.0), c == majority))
                for code, _, sure, probs in heard
            ]

            # Units: a region, with the next ones of its language that follow within JOIN_GAP, up to MAX_UNIT.
            units = []
            for region, code in zip(regions, languages):
                last = units[-1] if units else None
                joined = last and last.language == code and region[0] - (last.parts[-1][1] + last.parts[-1][2]) < JOIN_GAP and last.would_be(region) <= MAX_UNIT
                if not joined:
                    units.append(Unit(code))
                units[-1].add(region)

            out = []
            seconds = {}
            pending = list(units)
            reached = 0.0
            while pending:
                unit = pending.pop(0)
                try:
                    segments = decode_unit(model, unit, audio, beam)
                except Exception:
                    # A second chance only: whatever fails in it leaves the region as the joined
                    # decode did, never the recording failed.
                    if not unit.again:
                        raise
                    segments = []
                # A region of a joined unit left without a word is decoded again alone: the decoder
                # can end a joined unit early and lose a whole turn (bench: 4 of 31 turns without
                # text). Alone, what it hears is kept unless Whisper's own no-speech rule says it is
                # none (the joint decode already found nothing there: noise the VAD let through).
                if len(unit.parts) > 1 and not unit.untimed:
                    for lone in reversed(unheard(unit, segments)):
                        lone.again = True
                        pending.insert(0, lone)
                for s in segments:
                    if unit.again and s.no_speech_prob > 0.6 and s.avg_logprob < -1.0:
                        continue
                    words = []
                    for w in s.words or []:
                        text = clean(w.word)
                        if text.strip():
                            words.append([text, unit.to_recording(w.start), unit.to_recording(w.end), w.probability])
                    text = clean(s.text)
                    if not text.strip():
                        continue
                    start, end = unit.to_recording(s.start), unit.to_recording(s.end)
                    seconds[unit.language] = seconds.get(unit.language, 0.0) + max(0.0, end - start)
                    out.append({
                        "start": start,
                        "end": end,
                        "text": text,
                        "avgLogprob": s.avg_logprob,
                        "noSpeechProb": s.no_speech_prob,
                        "language": unit.language,
                        "words": words,
                    })
                reached = max(reached, unit.parts[-1][1])
                send({"type": "progress", "id": rid, "percent": min(100.0, 100.0 * reached / duration)})
            top = max(seconds.items(), key=lambda kv: kv[1])[0] if seconds else majority
            send({
                "type": "result",
                "id": rid,
                "language": forced or top,
                "languageProbability": 1.0 if forced else max((p for (c, p, _, _) in heard if c == top), default=0.0),
                "languages": sorted(seconds.items(), key=lambda kv: (-kv[1], kv[0])),
                "segments": sorted(out, key=lambda s: (s["start"], s["end"])),
                "regions": [
                    {"start": r[0], "end": r[1], "language": lang, "heard": h[0], "probability": h[1]}
                    for r, lang, h in zip(regions, languages, heard)
                ],
            })
        except Exception as err:  # the request fails, the process stays
            send({"type": "error", "id": rid, "message": f"{type(err).__name__}: {err}"})


if __name__ == "__main__":
    main()
