// The speaker-embedding port: a fixed-length voice vector for the parts of a recording where
// one speaker talks. Vectors stay inside the service (the voiceprint vault); nothing returns
// them to a client.

export interface TimeRange {
  startMs: number
  endMs: number
}

export interface SpeakerEmbedding {
  /** Unit-length vector. */
  vector: Float32Array
  /** Seconds of voice the vector was computed from. */
  voiceSeconds: number
}

export interface SpeakerEmbedder {
  /** The model file in use, recorded with each enrolment. */
  readonly model: string
  /** Null when the ranges hold too little voice to say anything. */
  embed(audioPath: string, ranges: readonly TimeRange[]): Promise<SpeakerEmbedding | null>
}
