# The Python side of the local diarizer (adapters/onnxruntime/diarizer.ts): one process, the three
# networks loaded once in onnxruntime, one request at a time. Requests come as JSON lines on stdin,
# answers go as JSON lines on stdout. Stopping a request is done by killing the process.
#
#   1. speaker change and overlap: pyannote segmentation-3.0 over 10 s windows every 5 s
#      (powerset decoding: up to 3 local speakers a window, 2 at once), aggregated over the
#      overlapping windows;
#   2. speech: Silero VAD's (faster-whisper's ONNX export, 32 ms frames) joined with what the
#      segmentation model hears; the `activity` request answers with it, and the analysis of
#      steps 1-2 is kept for the `diarize` request on the same file that follows;
#   3. speech cut at the pauses and at the speaker changes into single-speaker pieces (at most
#      `piece` seconds; overlapped speech left out), one CAM++ embedding per piece (Kaldi fbank,
#      80 mel bins, mean-normalised);
#   4. clustering: average-linkage agglomeration on cosine similarity, stopped at a calibrated
#      threshold (or at the hinted count); clusters with too little speech are not speakers of
#      their own: their pieces join the nearest large cluster;
#   5. pieces too short to embed well take the speaker the segmentation model links them to
#      inside a window (its local speaker id), else the nearest centroid; overlapped frames get
#      the window's two local speakers mapped to their clusters.
#
#   argv: <models dir> <threads>
#   in:   {"id": 1, "op": "activity", "wav": "/path/16k-mono.wav"}
#         {"id": 2, "op": "diarize", "wav": "...", "speakers": 3 | null, "options": {...}}
#         {"id": 3, "op": "probe", "wav": "..."}   (raw network outputs, for the reference test)
#   out:  {"type": "ready", ...}
#         {"type": "result", "id": 1, "speech": [[startMs, endMs], ...]}
#         {"type": "result", "id": 2, "speech": [...], "turns": [[startMs, endMs, speaker], ...],
#          "speakers": [{"seconds": s, "confidence": c}, ...], "timing": {...}}
#         {"type": "error", "id": 1, "message": "..."}
import json
import os
import sys
import time
import wave

import numpy as np
import onnxruntime

SR = 16000

DEFAULTS = {
    # Silero VAD
    "vadThreshold": 0.5,
    "vadMinSpeechMs": 200,
    "vadMinSilenceMs": 100,
    "vadPadMs": 30,
    # segmentation windows
    "windowStep": 5.0,
    # pieces
    "piece": 3.0,
    "minPiece": 0.8,
    # clustering
    "threshold": 0.55,
    # Pieces the segmentation model hears as two different local speakers of one window, each
    # with at least this share of its frames, are never put in one cluster (0: no such links).
    "cannotLinkShare": 0.8,
    "minSpeakerSeconds": 1.0,
    "minSpeakerShare": 0.02,
    # Without a hint, a speaker whose pieces are barely closer to their own centroid than to
    # another speaker's (confidence below this) is merged into the nearest one. On the bench's
    # tuning part the one recording with a speaker too many had one at 0.33, and the lowest of a
    # right count was 0.42 (four espeak-ng voices on a telephone line): the midpoint.
    "minSpeakerConfidence": 0.375,
    # Without a hint, a speaker whose pieces' voice pitch falls in two groups at least this many
    # semitones apart is two people (0: never split). Alike voices that CAM++ hears as one can still
    # differ in pitch; one speaker's pieces stayed within 2.9 semitones on the bench's tuning part,
    # and counts were best for gaps of 3.5-5: the widest of them.
    "pitchGap": 5.0,
    # A group split off joins another speaker whose median pitch is this close (in semitones)
    # instead of becoming a new one: it is that speaker's piece the clustering put astray.
    "pitchJoin": 2.0,
    # A piece's pitch counts only with voiced frames on this share of it and a spread (standard
    # deviation, semitones) under pitchMaxSpread: octave jumps on a telephone line are neither.
    "pitchMinVoiced": 0.3,
    "pitchMaxSpread": 6.0,
}


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def read_wav(path):
    """The pipeline's decoded audio (16 kHz 16-bit mono PCM WAV) as float32 in [-1, 1]."""
    with wave.open(path, "rb") as w:
        if (w.getsampwidth(), w.getframerate(), w.getnchannels()) != (2, SR, 1):
            raise ValueError(f"{path} is not 16 kHz 16-bit mono PCM")
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / 32768.0


# ---- features --------------------------------------------------------------------------------------


def _mel_banks(bins=80, fft=512, low=20.0, high=SR / 2):
    """Kaldi's (torchaudio.compliance.kaldi's) triangular mel filters, 80 x 257."""
    mel = lambda f: 1127.0 * np.log(1.0 + f / 700.0)
    lo, hi = mel(low), mel(high)
    delta = (hi - lo) / (bins + 1)
    b = np.arange(bins)[:, None]
    left, center, right = lo + b * delta, lo + (b + 1) * delta, lo + (b + 2) * delta
    m = mel((SR / fft) * np.arange(fft // 2))[None, :]
    banks = np.maximum(0.0, np.minimum((m - left) / (center - left), (right - m) / (right - center)))
    return np.pad(banks, ((0, 0), (0, 1)))


_BANKS = _mel_banks()
_POVEY = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(400) / 399)) ** 0.85


def fbank(x):
    """Kaldi fbank as 3D-Speaker computes it (25 ms frames every 10 ms, no dither), frames x 80."""
    if len(x) < 400:
        x = np.pad(x, (0, 400 - len(x)))
    n = 1 + (len(x) - 400) // 160
    idx = np.arange(400)[None, :] + 160 * np.arange(n)[:, None]
    f = x[idx].astype(np.float32)
    f = f - f.mean(axis=1, keepdims=True)
    f = np.concatenate([f[:, :1] * (1 - 0.97), f[:, 1:] - 0.97 * f[:, :-1]], axis=1) * _POVEY.astype(np.float32)
    power = np.abs(np.fft.rfft(f, 512)) ** 2
    return np.log(np.maximum(power @ _BANKS.T.astype(np.float32), np.finfo(np.float32).eps)).astype(np.float32)


# ---- pitch -----------------------------------------------------------------------------------------

PITCH_FRAME = 640  # 40 ms: the lags searched (up to 16.7 ms, 60 Hz) fit in its second half
PITCH_HOP = 160
PITCH_MIN_HZ = 60.0
PITCH_MAX_HZ = 500.0
YIN_THRESHOLD = 0.2


def pitch_track(x):
    """YIN (de Cheveigné and Kawahara, 2002): the pitch in semitones (12 log2 Hz) of each voiced
    10-ms frame. A frame is voiced when the cumulative-mean-normalised difference dips under the
    threshold; its period is the first dip's minimum (the first, so as not to jump an octave down)."""
    if len(x) < PITCH_FRAME + 1:
        return np.zeros(0)
    n = 1 + (len(x) - PITCH_FRAME) // PITCH_HOP
    idx = np.arange(PITCH_FRAME)[None, :] + PITCH_HOP * np.arange(n)[:, None]
    fr = x[idx].astype(np.float64)
    fr -= fr.mean(axis=1, keepdims=True)
    half = PITCH_FRAME // 2
    tmax, tmin = int(SR / PITCH_MIN_HZ), int(SR / PITCH_MAX_HZ)
    # d(tau) = sum over the first half of (x_j - x_{j+tau})^2, from an FFT cross-correlation.
    size = 2 * PITCH_FRAME
    cross = np.fft.irfft(np.fft.rfft(fr, size) * np.conj(np.fft.rfft(fr[:, :half], size)), size)[:, : tmax + 1]
    squares = fr**2
    cs = np.concatenate([np.zeros((n, 1)), np.cumsum(squares, axis=1)], axis=1)
    taus = np.arange(tmax + 1)
    d = (cs[:, half] - cs[:, 0])[:, None] + (cs[:, taus + half] - cs[:, taus]) - 2 * cross
    d[:, 0] = 0
    cmndf = np.ones_like(d)
    cmndf[:, 1:] = d[:, 1:] * taus[None, 1:] / np.maximum(np.cumsum(d[:, 1:], axis=1), 1e-12)
    seg = cmndf[:, tmin:]
    under = seg < YIN_THRESHOLD
    voiced = under.any(axis=1) & (squares.mean(axis=1) >= 1e-5)
    first = np.argmax(under, axis=1)
    # From the first dip on, the first lag where the function rises again.
    rising = np.diff(seg, axis=1) >= 0
    rising &= np.arange(seg.shape[1] - 1)[None, :] >= first[:, None]
    rising[:, -1] = True
    period = np.argmax(rising, axis=1) + tmin
    return 12 * np.log2(SR / period[voiced])


def piece_pitch(x, opts):
    """The median pitch of a piece in semitones, or nan when too little of it is voiced or its
    frames disagree (an unreliable track)."""
    track = pitch_track(x)
    frames = max(1, len(x) // PITCH_HOP)
    if len(track) < 10 or len(track) / frames < opts["pitchMinVoiced"] or float(np.std(track)) > opts["pitchMaxSpread"]:
        return np.nan
    return float(np.median(track))


# ---- models ----------------------------------------------------------------------------------------

# segmentation-3.0's frames: the SincNet strides make one every 270 samples, each seeing 991.
FRAME_STEP = 270
FRAME_SPAN = 991
WINDOW = 10 * SR
# Powerset classes: nobody, each of 3 local speakers alone, each pair.
POWERSET = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [1, 0, 1], [0, 1, 1]], dtype=np.int8)


class Models:
    def __init__(self, models_dir, threads):
        def session(name, intra):
            o = onnxruntime.SessionOptions()
            o.intra_op_num_threads = intra
            o.inter_op_num_threads = 1
            o.log_severity_level = 3
            # Idle threads sleep instead of spinning: on a busy machine spinning burns the CPU
            # the speech engine and the other jobs need.
            o.add_session_config_entry("session.intra_op.allow_spinning", "0")
            return onnxruntime.InferenceSession(os.path.join(models_dir, name), o, providers=["CPUExecutionProvider"])

        self.vad = session("silero_vad_v6.onnx", 1)
        self.segmentation = session("segmentation-3.0.onnx", threads)
        self.embedding = session("campplus.onnx", threads)

    def speech_probs(self, x):
        """Silero's speech probability per 512 samples (32 ms), each frame with the 64 samples
        before it as context; the recurrent state carries over from one batch to the next."""
        b = np.pad(x, (0, (-len(x)) % 512)).reshape(-1, 512)
        h = np.zeros((1, 1, 128), np.float32)
        c = np.zeros((1, 1, 128), np.float32)
        out = [np.zeros(0, np.float32)]
        for i in range(0, len(b), 10000):
            frames = b[i : i + 10000]
            context = np.concatenate([b[i - 1 : i, -64:] if i > 0 else np.zeros((1, 64), np.float32), frames[:-1, -64:]])
            p, h, c = self.vad.run(None, {"input": np.concatenate([context, frames], axis=1), "h": h, "c": c})
            out.append(p.reshape(-1))
        return np.concatenate(out)

    def segment(self, windows):
        """Log-probabilities of the 7 powerset classes, windows x 589 frames x 7."""
        return self.segmentation.run(None, {"waveform": windows[:, None, :].astype(np.float32)})[0]

    def embed(self, feats):
        """A unit CAM++ embedding of fbank frames (mean-normalised here, as in training)."""
        f = feats - feats.mean(axis=0, keepdims=True)
        e = self.embedding.run(None, {"fbank": f[None].astype(np.float32)})[0][0]
        return e / max(np.linalg.norm(e), 1e-9)


# ---- speech activity -------------------------------------------------------------------------------


def speech_ranges(probs, length, opts):
    """Silero's hysteresis (faster-whisper's rules): on at `threshold`, off below threshold - 0.15
    for `vadMinSilenceMs`; stretches shorter than `vadMinSpeechMs` dropped; `vadPadMs` each side."""
    on, off = opts["vadThreshold"], max(opts["vadThreshold"] - 0.15, 0.01)
    min_silence = opts["vadMinSilenceMs"] * SR / 1000
    min_speech = opts["vadMinSpeechMs"] * SR / 1000
    pad = int(opts["vadPadMs"] * SR / 1000)
    out = []
    start = None
    silent_from = None
    for i, p in enumerate(probs):
        at = i * 512
        if start is None:
            if p >= on:
                start, silent_from = at, None
            continue
        if p >= on:
            silent_from = None
        elif p < off:
            if silent_from is None:
                silent_from = at
            if at - silent_from >= min_silence:
                if silent_from - start >= min_speech:
                    out.append([start, silent_from])
                start = silent_from = None
    if start is not None:
        end = silent_from if silent_from is not None else length
        if end - start >= min_speech:
            out.append([start, end])
    ranges = []
    for a, b in out:
        a, b = max(0, a - pad), min(length, b + pad)
        if ranges and a <= ranges[-1][1]:
            ranges[-1][1] = max(ranges[-1][1], b)
        else:
            ranges.append([a, b])
    return ranges


# ---- segmentation: changes, overlap and local identities ------------------------------------------


def window_starts(length, step):
    if length <= WINDOW:
        return [0]
    starts = list(range(0, length - WINDOW + 1, step))
    if starts[-1] + WINDOW < length:
        starts.append(length - WINDOW)
    return starts


def run_segmentation(models, x, step_seconds):
    """Local speaker activity of every window: a list of (start sample, frames x 3)."""
    step = int(step_seconds * SR)
    starts = window_starts(len(x), step)
    out = []
    for i in range(0, len(starts), 8):
        batch = starts[i : i + 8]
        chunk = np.zeros((len(batch), WINDOW), np.float32)
        for j, s in enumerate(batch):
            part = x[s : s + WINDOW]
            chunk[j, : len(part)] = part
        logp = models.segment(chunk)
        for j, s in enumerate(batch):
            out.append((s, POWERSET[np.argmax(logp[j], axis=-1)]))
    return out


def frame_time(start, f):
    """Centre (in samples) of frame f of a window starting at `start`."""
    return start + f * FRAME_STEP + FRAME_SPAN // 2


def local_runs(active):
    """Runs of one dominant local speaker in a window: (first frame, last frame + 1, local id or -1 for overlap)."""
    runs = []
    count = active.sum(axis=1)
    for f in range(len(active)):
        if count[f] == 0:
            continue
        label = -1 if count[f] > 1 else int(np.argmax(active[f]))
        if runs and runs[-1][2] == label and runs[-1][1] >= f - 3:
            runs[-1][1] = f + 1
        else:
            runs.append([f, f + 1, label])
    return runs


def change_points(windows, length, edge_frames=40):
    """Speaker changes most windows that see a place agree on (in samples), and the frames where
    most windows hear two speakers at once, and anyone at all.

    Each window votes for the boundaries between its runs of different local speakers (not within
    `edge_frames` of its own edges, where it sees half the context); a change is kept where the
    votes near it reach half of the windows that could have seen it.
    """
    votes = []
    # A window may run past the end of a recording shorter than itself.
    overlap_votes = np.zeros(max(length, max(s for s, _ in windows) + WINDOW) // FRAME_STEP + 2, np.float32)
    speech_votes = np.zeros_like(overlap_votes)
    cover = np.zeros_like(overlap_votes)
    for start, active in windows:
        n = len(active)
        first = 0 if start == 0 else edge_frames
        last = n if start + WINDOW >= length else n - edge_frames
        g0 = start // FRAME_STEP
        cover[g0 + first : g0 + last] += 1
        count = active.sum(axis=1)
        overlap_votes[g0 + first : g0 + last] += (count[first:last] > 1).astype(np.float32)
        speech_votes[g0 + first : g0 + last] += (count[first:last] > 0).astype(np.float32)
        runs = [r for r in local_runs(active) if r[2] >= 0]
        for a, b in zip(runs, runs[1:]):
            if a[2] == b[2]:
                continue
            at = (a[1] + b[0]) // 2
            if first <= at < last:
                votes.append(frame_time(start, at) if a[1] == b[0] else (frame_time(start, a[1]) + frame_time(start, b[0])) // 2)
    votes.sort()
    changes = []
    i = 0
    while i < len(votes):
        j = i
        while j + 1 < len(votes) and votes[j + 1] - votes[i] <= int(0.3 * SR):
            j += 1
        group = votes[i : j + 1]
        at = int(np.median(group))
        seen = cover[min(len(cover) - 1, at // FRAME_STEP)]
        if seen > 0 and len(group) >= 0.5 * seen:
            changes.append(at)
        i = j + 1
    majority = lambda votes: (cover > 0) & (votes >= 0.5 * np.maximum(cover, 1))
    return changes, majority(overlap_votes), majority(speech_votes)


def frame_ranges(flags):
    """Runs of set frames as sample ranges."""
    out = []
    f = 0
    while f < len(flags):
        if flags[f]:
            g = f
            while g < len(flags) and flags[g]:
                g += 1
            out.append([f * FRAME_STEP + FRAME_SPAN // 2, g * FRAME_STEP + FRAME_SPAN // 2])
            f = g
        else:
            f += 1
    return out


def union(a, b, min_gap, min_len):
    """Both lists of ranges as one, gaps under `min_gap` closed, stretches under `min_len` dropped."""
    out = []
    for r0, r1 in sorted(a + b):
        if out and r0 <= out[-1][1] + min_gap:
            out[-1][1] = max(out[-1][1], r1)
        else:
            out.append([r0, r1])
    return [r for r in out if r[1] - r[0] >= min_len]


def subtract(ranges, holes):
    out = []
    for a, b in ranges:
        cur = a
        for h0, h1 in holes:
            if h1 <= cur or h0 >= b:
                continue
            if h0 > cur:
                out.append([cur, h0])
            cur = max(cur, h1)
        if cur < b:
            out.append([cur, b])
    return out


def pieces_of(speech, changes, overlaps, piece_seconds):
    """Speech cut at the changes, without the overlapped stretches, long stretches split evenly."""
    cut = []
    for a, b in subtract(speech, overlaps):
        inner = [c for c in changes if a < c < b]
        bounds = [a] + inner + [b]
        for s, e in zip(bounds, bounds[1:]):
            n = max(1, int(np.ceil((e - s) / (piece_seconds * SR))))
            for k in range(n):
                cut.append([s + (e - s) * k // n, s + (e - s) * (k + 1) // n])
    return [p for p in cut if p[1] - p[0] >= int(0.1 * SR)]


# ---- clustering ------------------------------------------------------------------------------------


def agglomerate(vectors, weights, threshold, k, cannot=None):
    """Average-linkage clustering on cosine similarity: merges until the closest pair is below the
    threshold (k None) or k clusters remain, never two clusters with a cannot-link between their
    members. Returns a label per vector."""
    n = len(vectors)
    sim = vectors @ vectors.T
    np.fill_diagonal(sim, -np.inf)
    cannot = np.zeros((n, n), bool) if cannot is None else cannot.copy()
    sim[cannot] = -np.inf
    size = np.array(weights, dtype=np.float64)
    alive = np.ones(n, bool)
    owner = np.arange(n)
    clusters = n
    target = 1 if k is None else max(1, min(k, n))
    while clusters > target:
        i, j = np.unravel_index(np.argmax(sim), sim.shape)
        if sim[i, j] == -np.inf or (k is None and sim[i, j] < threshold):
            break
        # Lance-Williams update for average linkage, weighted by seconds of speech.
        row = (size[i] * sim[i] + size[j] * sim[j]) / (size[i] + size[j])
        cannot[i] |= cannot[j]
        cannot[:, i] = cannot[i]
        row[cannot[i]] = -np.inf
        sim[i, :] = row
        sim[:, i] = row
        sim[i, i] = -np.inf
        sim[j, :] = -np.inf
        sim[:, j] = -np.inf
        size[i] += size[j]
        alive[j] = False
        owner[owner == j] = i
        clusters -= 1
    _, labels = np.unique(owner, return_inverse=True)
    return labels


def centroids_of(vectors, labels, weights):
    out = {}
    for l in np.unique(labels):
        c = (vectors[labels == l] * weights[labels == l, None]).sum(axis=0)
        out[int(l)] = c / max(np.linalg.norm(c), 1e-9)
    return out


def window_frames(start, active, a, b):
    """The window's frames (local speakers' activity) over [a, b), or None when the window does not
    hold all of it."""
    if a < start or b > start + WINDOW:
        return None
    f0 = (a - start) // FRAME_STEP
    f1 = min(len(active), max(f0 + 1, (b - start) // FRAME_STEP))
    return active[f0:f1] if f1 > f0 else None


def cannot_links(windows, keys, share):
    """Pairs of pieces the segmentation model hears as two different local speakers of one window
    (each piece mostly one of them): two voices alike to the embedding, such as two people on a
    telephone line, still differ to the model that hears them side by side."""
    n = len(keys)
    cannot = np.zeros((n, n), bool)
    if share <= 0:
        return cannot
    for start, active in windows:
        heard = []
        for idx, (a, b) in enumerate(keys):
            frames = window_frames(start, active, a, b)
            if frames is None:
                continue
            mean = frames.mean(axis=0)
            local = int(np.argmax(mean))
            if mean[local] >= share and np.delete(mean, local).max() <= 1 - share:
                heard.append((idx, local))
        for i, li in heard:
            for j, lj in heard:
                if li != lj:
                    cannot[i, j] = True
    return cannot


def cluster(vectors, weights, k, opts, cannot=None):
    """Labels per vector. Without a hint: agglomeration down to the threshold, clusters with less
    speech than a person's minimum are not speakers of their own, and a speaker barely apart from
    another (confidence under minSpeakerConfidence) is merged into the nearest. With a hint of k: the tree
    is cut where k clusters have that much speech (so an outlier does not take a speaker's place),
    and the k with the most speech are the speakers. The others' pieces join the nearest speaker."""
    if len(vectors) == 1:
        return np.zeros(1, int)
    total = float(weights.sum())
    min_seconds = max(opts["minSpeakerSeconds"], opts["minSpeakerShare"] * total)
    if k is None:
        labels = agglomerate(vectors, weights, opts["threshold"], None, cannot)
        seconds = np.bincount(labels, weights=weights)
        keep = [l for l in range(len(seconds)) if seconds[l] >= min_seconds] or [int(np.argmax(seconds))]
    else:
        k = min(k, len(vectors))
        for c in range(k, len(vectors) + 1):
            labels = agglomerate(vectors, weights, opts["threshold"], c, cannot)
            seconds = np.bincount(labels, weights=weights)
            if (seconds >= min_seconds).sum() >= k:
                break
        keep = list(np.argsort(-seconds)[:k])
    cents = centroids_of(vectors, labels, weights)
    for i in range(len(labels)):
        if labels[i] not in keep:
            labels[i] = max(keep, key=lambda l: float(vectors[i] @ cents[l]))
    _, labels = np.unique(labels, return_inverse=True)
    if k is None:
        while len(set(labels.tolist())) > 1:
            cents = centroids_of(vectors, labels, weights)
            conf = confidences(vectors, weights, labels, cents)
            weakest = min(conf, key=lambda l: (conf[l], l))
            if conf[weakest] >= opts["minSpeakerConfidence"]:
                break
            nearest = max((l for l in cents if l != weakest), key=lambda l: float(cents[weakest] @ cents[l]))
            labels = np.where(labels == weakest, nearest, labels)
            _, labels = np.unique(labels, return_inverse=True)
    return labels


def split_by_pitch(vectors, weights, labels, pitch, opts):
    """Speakers whose pieces' pitch (nan: unknown) falls in two groups pitchGap or more apart, each
    with a speaker's minimum of speech, split at the widest gap: the lower and the higher group each
    keep the pieces nearer their own centroid. A group whose pitch another speaker has (within
    pitchJoin) joins the one of those nearest to it instead of becoming a speaker of its own."""
    if opts["pitchGap"] <= 0:
        return labels
    labels = labels.copy()
    min_seconds = max(opts["minSpeakerSeconds"], opts["minSpeakerShare"] * float(weights.sum()))

    def median_pitch(lab):
        known = pitch[(labels == lab) & ~np.isnan(pitch)]
        return float(np.median(known)) if len(known) else np.nan

    for lab in sorted(set(labels.tolist())):
        members = np.flatnonzero(labels == lab)
        known = members[~np.isnan(pitch[members])]
        if len(known) < 2:
            continue
        ordered = known[np.argsort(pitch[known])]
        gaps = np.diff(pitch[ordered])
        at = int(np.argmax(gaps))
        low, high = ordered[: at + 1], ordered[at + 1 :]
        if gaps[at] < opts["pitchGap"] or weights[low].sum() < min_seconds or weights[high].sum() < min_seconds:
            continue
        low_c = centroids_of(vectors[low], np.zeros(len(low), int), weights[low])[0]
        high_c = centroids_of(vectors[high], np.zeros(len(high), int), weights[high])[0]
        to_high = np.array([i in high or (i not in low and float(vectors[i] @ high_c) > float(vectors[i] @ low_c)) for i in members])
        new = labels.max() + 1
        for group, centroid, side in ((high, high_c, to_high), (low, low_c, ~to_high)):
            group_pitch = float(np.median(pitch[group]))
            alike = [l for l in set(labels.tolist()) if l != lab and abs(median_pitch(l) - group_pitch) < opts["pitchJoin"]]
            if alike:
                cents = centroids_of(vectors, labels, weights)
                labels[members[side]] = max(alike, key=lambda l: float(centroid @ cents[l]))
                break
        else:
            labels[members[to_high]] = new
    _, labels = np.unique(labels, return_inverse=True)
    return labels


def confidences(vectors, weights, labels, cents):
    """Per speaker: how much closer their pieces are to their own centroid than to the next one,
    seconds-weighted (1: clearly apart, 0: indistinguishable)."""
    out = {}
    for lab, own_centroid in cents.items():
        members = np.flatnonzero(labels == lab)
        margins = []
        for i in members:
            own = float(vectors[i] @ own_centroid)
            other = max([float(vectors[i] @ c) for l, c in cents.items() if l != lab], default=own - 1)
            margins.append(min(1.0, max(0.0, (own - other) / 0.5)) * weights[i])
        out[lab] = sum(margins) / max(1e-9, float(weights[members].sum()))
    return out


# ---- the whole diarization -------------------------------------------------------------------------


def in_window_label(windows, a, b, labelled):
    """The cluster the segmentation links [a, b) to: in each window that covers it, its dominant
    local speaker and the clusters of the labelled pieces with the same local speaker there."""
    votes = {}
    for start, active in windows:
        frames = window_frames(start, active, a, b)
        if frames is None:
            continue
        act = frames.sum(axis=0)
        if act.max() == 0:
            continue
        local = int(np.argmax(act))
        for (pa, pb), label in labelled:
            if pa < start or pb > start + WINDOW or (pa < b and pb > a):
                continue
            g0 = (pa - start) // FRAME_STEP
            g1 = max(g0 + 1, (pb - start) // FRAME_STEP)
            share = active[g0:g1, local].mean() if g1 <= len(active) else 0
            if share > 0.5:
                votes[label] = votes.get(label, 0.0) + share * (pb - pa)
    if not votes:
        return None
    return max(votes, key=votes.get)


class Analysis:
    """What both the speech activity and the diarization of one recording need: the speech
    (Silero's, and what the segmentation model hears that Silero missed, such as a quiet voice on
    a telephone line), the windows' local speakers, the changes and the overlapped stretches."""

    def __init__(self, models, x, opts):
        self.timing = {}
        t = time.process_time()
        vad = speech_ranges(models.speech_probs(x), len(x), opts)
        self.timing["vad"] = time.process_time() - t
        t = time.process_time()
        self.windows = run_segmentation(models, x, opts["windowStep"]) if len(x) > 0 else []
        if self.windows:
            self.changes, overlapped, heard = change_points(self.windows, len(x))
            self.overlaps = [r for r in frame_ranges(overlapped) if r[1] - r[0] >= int(0.1 * SR)]
            heard = [[a, min(b, len(x))] for a, b in frame_ranges(heard) if a < len(x)]
        else:
            self.changes, self.overlaps, heard = [], [], []
        self.speech = union(vad, heard, int(0.1 * SR), int(opts["vadMinSpeechMs"] * SR / 1000))
        self.timing["segmentation"] = time.process_time() - t


_recent = {}


def analysis_of(models, path, x, opts):
    """The analysis of a file, kept for the next request on the same file (activity, then diarization)."""
    st = os.stat(path)
    key = (path, st.st_size, st.st_mtime_ns, opts["windowStep"], opts["vadThreshold"], opts["vadMinSpeechMs"], opts["vadMinSilenceMs"], opts["vadPadMs"])
    if key not in _recent:
        if len(_recent) >= 4:
            _recent.pop(next(iter(_recent)))
        _recent[key] = Analysis(models, x, opts)
    return _recent[key]


def merged_turns(turns):
    """In order, a speaker's pieces that touch (or nearly) as one turn."""
    out = []
    for a, b, lab in sorted(turns, key=lambda t_: (t_[0], t_[1])):
        if out and out[-1][2] == lab and a - out[-1][1] <= int(0.05 * SR):
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b, lab])
    return out


def diarize(models, x, hint, opts, analysis):
    timing = dict(analysis.timing)
    speech, windows, changes, overlaps = analysis.speech, analysis.windows, analysis.changes, analysis.overlaps
    if not speech:
        return speech, [], [], timing
    pieces = pieces_of(speech, changes, overlaps, opts["piece"])
    t = time.process_time()
    long_pieces = [p for p in pieces if p[1] - p[0] >= opts["minPiece"] * SR]
    if not long_pieces:
        long_pieces = sorted(pieces, key=lambda p: p[0] - p[1])[:1]
    embedded = [p for p in pieces if p[1] - p[0] >= int(0.3 * SR)] or long_pieces
    # Features of each piece on its own (the whole recording's would not fit in memory for hours of audio).
    vectors = {(a, b): models.embed(fbank(x[a:b])) for a, b in embedded}
    timing["embedding"] = time.process_time() - t
    t = time.process_time()
    keys = [tuple(p) for p in long_pieces]
    v = np.stack([vectors[p] for p in keys])
    w = np.array([(b - a) / SR for a, b in keys])
    labels = cluster(v, w, hint, opts, cannot_links(windows, keys, opts["cannotLinkShare"]))
    if hint is None and opts["pitchGap"] > 0:
        labels = split_by_pitch(v, w, labels, np.array([piece_pitch(x[a:b], opts) for a, b in keys]), opts)
    cents = centroids_of(v, labels, w)
    labelled = [(p, int(l)) for p, l in zip(keys, labels)]
    known = dict(labelled)
    turns = []
    for a, b in pieces:
        label = known.get((a, b))
        if label is None:
            label = in_window_label(windows, a, b, labelled)
        if label is None and (a, b) in vectors:
            label = max(cents, key=lambda l: float(vectors[(a, b)] @ cents[l]))
        if label is None:
            # Nothing to go on: the nearest labelled piece's speaker.
            label = min(labelled, key=lambda pl: min(abs(pl[0][0] - b), abs(a - pl[0][1])))[1]
        turns.append([a, b, label])
    # Overlapped stretches: the two local speakers of the best window, each mapped to a cluster.
    for a, b in overlaps:
        found = []
        for start, active in windows:
            if a < start or b > start + WINDOW:
                continue
            f0, f1 = (a - start) // FRAME_STEP, max((a - start) // FRAME_STEP + 1, (b - start) // FRAME_STEP)
            locals_ = np.argsort(-active[f0:f1].sum(axis=0))[:2]
            for local in locals_:
                only = np.where(np.arange(3)[None, :] == local, active, 0)
                lab = in_window_label([(start, only)], a, b, labelled)
                if lab is not None and lab not in found:
                    found.append(lab)
            if len(found) >= 2:
                break
        if not found:
            before = [t_ for t_ in turns if t_[1] <= a + int(0.05 * SR)]
            after = [t_ for t_ in turns if t_[0] >= b - int(0.05 * SR)]
            found = list(dict.fromkeys(([max(before, key=lambda t_: t_[1])[2]] if before else []) + ([min(after, key=lambda t_: t_[0])[2]] if after else [])))
        for lab in found[:2]:
            turns.append([a, b, lab])
    turns = merged_turns(turns)
    # Speakers numbered by first appearance, each with its confidence.
    order = {}
    for _, _, lab in turns:
        order.setdefault(lab, len(order))
    conf = confidences(v, w, labels, cents)
    speakers = []
    for lab, _ in sorted(order.items(), key=lambda kv: kv[1]):
        seconds = sum((b - a) / SR for a, b, l in turns if l == lab)
        speakers.append({"seconds": round(seconds, 2), "confidence": round(conf[lab], 3) if lab in conf else None})
    timing["clustering"] = time.process_time() - t
    return speech, [[a, b, order[l]] for a, b, l in turns], speakers, timing


def ms(samples):
    return int(round(samples * 1000 / SR))


def handle(models, req):
    """The answer's body to one request."""
    x = read_wav(req["wav"])
    opts = {**DEFAULTS, **(req.get("options") or {})}
    if req["op"] == "activity":
        return {"speech": [[ms(a), ms(b)] for a, b in analysis_of(models, req["wav"], x, opts).speech]}
    if req["op"] == "diarize":
        speech, turns, speakers, timing = diarize(models, x, req.get("speakers"), opts, analysis_of(models, req["wav"], x, opts))
        return {"speech": [[ms(a), ms(b)] for a, b in speech], "turns": [[ms(a), ms(b), l] for a, b, l in turns], "speakers": speakers, "timing": timing}
    if req["op"] == "probe":
        window = np.zeros(WINDOW, np.float32)
        window[: min(WINDOW, len(x))] = x[:WINDOW]
        feats = fbank(x[: 3 * SR])
        f = feats - feats.mean(axis=0, keepdims=True)
        return {
            "segmentation": models.segment(window[None])[0].tolist(),
            "fbank": feats.tolist(),
            "embedding": models.embedding.run(None, {"fbank": f[None]})[0][0].tolist(),
            "speechProbs": models.speech_probs(x).tolist(),
        }
    raise ValueError(f"unknown op {req['op']}")


def main():
    models_dir, threads = sys.argv[1], int(sys.argv[2])
    models = Models(models_dir, threads)
    send({"type": "ready", "onnxruntime": onnxruntime.__version__, "numpy": np.__version__, "threads": threads})
    requests = (json.loads(line) for line in sys.stdin if line.strip())
    for req in requests:
        try:
            send({"type": "result", "id": req["id"], **handle(models, req)})
        except Exception as err:  # the request fails, the process stays
            send({"type": "error", "id": req["id"], "message": f"{type(err).__name__}: {err}"})


if __name__ == "__main__":
    main()
