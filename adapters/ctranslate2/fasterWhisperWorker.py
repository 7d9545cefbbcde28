# The Python side of the faster-whisper speech engine (adapters/ctranslate2/fasterWhisper.ts):
# one process per engine, the model loaded once, one transcription at a time. Requests come as
# JSON lines on stdin, answers go as JSON lines on stdout; CTranslate2's own log (which CPU
# instruction set it selected) goes to stderr. Stopping a transcription is done by killing the
# process: nothing here needs to be interruptible.
#
#   argv: <model dir> <threads> <compute type> <beam size>
#   in:   {"id": 1, "wav": "/path/16k-mono.wav", "language": "es" | null}
#   out:  {"type": "ready", ...versions and model facts}
#         {"type": "progress", "id": 1, "percent": 42.0}
#         {"type": "result", "id": 1, "language": "es", "languageProbability": 0.98,
#          "languages": [["es", 61.2], ["en", 4.1]], "segments": [...]}
#         {"type": "error", "id": 1, "message": "..."}
import json
import logging
import sys
import wave

import numpy as np
import ctranslate2
import faster_whisper
from faster_whisper import WhisperModel


def send(obj):
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def read_wav(path):
    """16-bit PCM WAV (what the pipeline's ffmpeg step writes) as float32 samples in [-1, 1]."""
    with wave.open(path, "rb") as w:
        if w.getsampwidth() != 2 or w.getframerate() != 16000:
            raise ValueError("expected 16 kHz 16-bit PCM")
        frames = w.readframes(w.getnframes())
        samples = np.frombuffer(frames, dtype=np.int16).astype(np.float32) / 32768.0
        if w.getnchannels() > 1:
            samples = samples.reshape(-1, w.getnchannels()).mean(axis=1)
        return samples


class LanguageRecorder:
    """Stands in for the CTranslate2 model to note what each 30-second window was detected as.

    faster-whisper's `multilingual` mode detects the language of every window but keeps the
    answer to itself; the segments it yields after a detection belong to that window.
    """

    def __init__(self, inner):
        self._inner = inner
        self.last = None

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def detect_language(self, *args, **kwargs):
        results = self._inner.detect_language(*args, **kwargs)
        token, probability = results[0][0]
        self.last = (token[2:-2], probability)
        return results


def main():
    model_dir, threads, compute_type, beam = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    ctranslate2.set_log_level(logging.INFO)  # says which ISA it picked, on stderr
    model = WhisperModel(model_dir, device="cpu", compute_type=compute_type, cpu_threads=threads, num_workers=1)
    recorder = LanguageRecorder(model.model)
    model.model = recorder
    multilingual = bool(recorder.is_multilingual)
    send({
        "type": "ready",
        "ctranslate2": ctranslate2.__version__,
        "fasterWhisper": faster_whisper.__version__,
        "multilingual": multilingual,
        "languages": model.supported_languages,
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
            duration = max(len(audio) / 16000.0, 0.001)
            language = req.get("language")
            recorder.last = None
            segments, info = model.transcribe(
                audio,
                language=language,
                beam_size=beam,
                best_of=1,
                word_timestamps=True,
                # Per-window language detection when none is forced: languagesDetected.
                multilingual=multilingual and language is None,
                vad_filter=False,
            )
            out = []
            seconds = {}
            last_percent = -1.0
            for s in segments:
                lang = recorder.last[0] if (recorder.last and language is None and multilingual) else info.language
                seconds[lang] = seconds.get(lang, 0.0) + max(0.0, s.end - s.start)
                out.append({
                    "start": s.start,
                    "end": s.end,
                    "text": s.text,
                    "avgLogprob": s.avg_logprob,
                    "noSpeechProb": s.no_speech_prob,
                    "language": lang,
                    "words": [[w.word, w.start, w.end, w.probability] for w in (s.words or [])],
                })
                percent = min(100.0, 100.0 * s.end / duration)
                if percent - last_percent >= 1.0:
                    last_percent = percent
                    send({"type": "progress", "id": rid, "percent": percent})
            send({
                "type": "result",
                "id": rid,
                "language": info.language,
                "languageProbability": info.language_probability,
                "languages": sorted(seconds.items(), key=lambda kv: -kv[1]),
                "segments": out,
            })
        except Exception as err:  # the request fails, the process stays
            send({"type": "error", "id": rid, "message": f"{type(err).__name__}: {err}"})


if __name__ == "__main__":
    main()
