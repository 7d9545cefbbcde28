// extract_clip: an MP3 of a time range of a note's audio, cut by ffmpeg; 5 credits, refunded when
// the cut fails. The same command as REST GET /v1/notes/{id}/clip.
import { ClipInfo, ExtractClipInput } from '../../contract/clips.ts'
import { defineTool } from '../tool.ts'

export const extractClip = defineTool({
  name: 'extract_clip',
  title: 'Extract an audio clip',
  description:
    'Cuts [startMs, endMs) of a ready note’s audio (at most 5 minutes; cut at the end of the audio) into a mono 64 kbps MP3. ' +
    'The result has the clip as an audio content block (audio/mpeg) and, as structured content, noteId, startMs, endMs, durationMs, mimeType and sizeBytes. ' +
    'Errors: note_not_ready, audio_unavailable (the note keeps no audio: a published transcript was imported without its audio), invalid_request (a bad range), insufficient_credits.',
  input: ExtractClipInput,
  output: ClipInfo,
  readOnly: false,
  binary: { field: 'data', mimeType: 'audio/mpeg' },
  handle: ({ app, caller }, range) => app.clips.extract(caller, range),
})
