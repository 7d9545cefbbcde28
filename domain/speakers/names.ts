// Speaker names as the language features show them: the name the speakers feature recorded on
// the transcript read model when there is one (it adds `name` to each speaker), the diarization
// letter otherwise.

export function speakerNameMap(speakers: readonly { label: string }[] | undefined): Map<string, string> {
  const out = new Map<string, string>()
  for (const s of speakers ?? []) {
    const name = (s as { name?: unknown }).name
    if (typeof name === 'string' && name.trim()) out.set(s.label, name.trim())
  }
  return out
}
